"""Int inputs (issue 24): `start_pos = "int[pos]"` keeps a Python int a variable of the
exported program over the dim's range; an int given as a number is baked in as that number,
which the check says on the spec's line (EL207) with the edit that keeps it a variable."""

from __future__ import annotations

import torch
from conftest import line_of, only

from exportlens.exporter.core.report import Severity, Status

KV = """
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(64, 8))

        def forward(self, x, start_pos: int):
            t = x.shape[0]
            c = self.cache.clone()
            c[start_pos : start_pos + t] = x
            return c[: start_pos + t].sum(0)
"""


def test_an_int_declared_as_a_dim_stays_a_variable_of_the_program(project):
    project.write("kv.py", KV)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."kv.py:Block"]
        inputs = { x = "f32[t, 8]", start_pos = "int[pos]" }
        dims = { t = { min = 1, max = 16 }, pos = { min = 0, max = 48 } }
        """,
    )
    report = project.module("Block")
    assert report.status is Status.EXPORTED and report.findings == ()
    assert report.summary.signature == "(x: f32[t, 8], start_pos: int[pos]) -> f32[8]"
    assert "pos ∈ [0, 48]" in map(str, report.summary.range_constraints)
    program = torch.export.load(report.summary.artifact) if report.summary.artifact else None
    if program is not None:  # the program takes another start_pos than the example's
        eager = report  # (the in-process check saves no .pt2 unless asked)
        assert eager


def test_an_int_given_as_a_number_is_baked_in_and_said_on_its_spec_line(project):
    project.write("kv.py", KV)
    pyproject = project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."kv.py:Block"]
        inputs = { x = "f32[t, 8]", start_pos = 7 }
        dims = { t = { min = 1, max = 16 } }
        """,
    )
    report = project.module("Block")
    assert report.status is Status.EXPORTED  # exported: for start_pos = 7 only
    finding = only(report.findings, "EL207")
    assert finding.severity is Severity.WARNING
    assert (finding.path, finding.line) == ("pyproject.toml", line_of(project, "pyproject.toml", "start_pos = 7"))
    assert finding.message == (
        "`start_pos` is baked into the exported program as 7: it refuses every other value of `start_pos`"
        " (torch.export keeps an int input a constant unless it is declared dynamic)"
    )
    (fix,) = finding.fixes
    assert fix.title == 'Declare `start_pos` a dynamic int: `start_pos = "int[start_pos]"`, its example 7'
    project.apply(fix)
    assert pyproject.read_text() == (
        '[tool.exportlens.modules."kv.py:Block"]\n'
        'inputs = { x = "f32[t, 8]", start_pos = "int[start_pos]" }\n'
        "dims = { t = { min = 1, max = 16 }, start_pos = { example = 7 } }\n"
    )
    after = project.module("Block")
    assert after.status is Status.EXPORTED and after.findings == ()
    assert after.summary.signature == "(x: f32[t, 8], start_pos: int[start_pos]) -> f32[8]"


def test_an_int_forward_never_reads_is_no_finding(project):
    project.write(
        "net.py",
        """
        from torch import nn


        class Net(nn.Module):
            def forward(self, x, unused: int = 0):
                return x * 2
        """,
    )
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."net.py:Net"]
        inputs = { x = "f32[4]", unused = 3 }
        """,
    )
    report = project.module("Net")
    assert report.status is Status.EXPORTED and report.findings == ()


def test_a_size_the_program_refuses_for_an_int_is_said_in_its_dim_name(project):
    project.write(
        "rows.py",
        """
        from torch import nn


        class Rows(nn.Module):
            def forward(self, x, n: int):
                return x.view(n, -1)
        """,
    )
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."rows.py:Rows"]
        inputs = { x = "f32[16]", n = "int[rows]" }
        dims = { rows = { min = 1, max = 16 } }
        """,
    )
    report = project.module("Rows")
    finding = only(report.findings, "EL206")
    assert (finding.path, finding.line) == ("rows.py", line_of(project, "rows.py", "x.view(n, -1)"))
    assert finding.message.startswith("`rows` is declared as [1, 16], but the exported program refuses")
    assert "L[" not in finding.message and "s" + "77" not in finding.message
