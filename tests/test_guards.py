"""The guard record (issue 39): each guard and runtime assertion of an exported program, in
the spec's dim names, on the user's line that made it; `exportlens show` prints it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of

from exportlens.exporter.core.equality import Equality
from exportlens.exporter.core.guards import Guard, GuardKind
from exportlens.exporter.core.report import SCHEMA, Report, Status, Summary, from_dict, report_json, to_dict

REPO = Path(__file__).resolve().parent.parent
TORCH_SYMBOL = re.compile(r"\b(?:[su]|zuf)\d+\b")

PYPROJECT = """
    [tool.exportlens.modules."pair.py:Pair"]
    inputs = { a = "f32[n, 4]", b = "f32[?, 4]" }
    dims = { n = { min = 2, max = 64 } }

    [tool.exportlens.modules."wide.py:Wide"]
    inputs = { x = "f32[rows, ?]", y = "f32[rows, 8]" }
    dims = { rows = { min = 2, max = 48 } }

    [tool.exportlens.modules."count.py:Count"]
    inputs = { x = "f32[rows, 4]" }
    dims = { rows = { min = 2, max = 48 } }
"""
PAIR = """
    import torch
    from torch import nn

    class Pair(nn.Module):
        def forward(self, a, b):
            doubled = a * 2
            return doubled + b  # ties b's rows to a's: n
"""
COUNT = """
    import torch
    from torch import nn

    class Count(nn.Module):
        def forward(self, x):
            k = (x > 0).sum().item()
            torch._check(k <= 256)
            return x * 2, torch.zeros(k)
"""


WIDE = """
    import torch
    from torch import nn

    class Wide(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 4)

        def forward(self, x, y):
            return self.proj(x), y  # pins the open width to 8
"""


@pytest.fixture
def guarded(project):
    project.write("pyproject.toml", PYPROJECT)
    project.write("wide.py", WIDE)
    project.write("pair.py", PAIR)
    project.write("count.py", COUNT)
    return project


def test_a_relation_and_a_runtime_check_are_on_the_lines_that_made_them(guarded):
    report = guarded.check()
    pair, count = (next(m for m in report.modules if m.target.endswith(c)) for c in (":Pair", ":Count"))
    assert pair.status is Status.EXPORTED and count.status is Status.EXPORTED
    tie = line_of(guarded, "pair.py", "return doubled + b")
    assert Guard(GuardKind.RELATION, "b.shape[0] == n", "pair.py", tie, ("b.shape[0]", "n")) in pair.summary.guards
    assert Guard(GuardKind.RANGE, "2 <= n <= 64", dims=("n",)) in pair.summary.guards  # the program's range, on no line
    check = line_of(guarded, "count.py", "torch._check(k <= 256)")
    assert Guard(GuardKind.RUNTIME_ASSERT, "k <= 256", "count.py", check, ("k",)) in count.summary.guards
    assert Guard(GuardKind.RANGE, "2 <= rows <= 48", dims=("rows",)) in count.summary.guards
    texts = [g.text for m in (pair, count) for g in m.summary.guards]
    assert not [t for t in texts if TORCH_SYMBOL.search(t)], texts
    # the JSON report carries them as data, and reads back
    data = report_json(Report(modules=(pair,)))
    assert data["schema"] == SCHEMA == "2.5"
    said = data["modules"][0]["summary"]["guards"]
    relation = {
        "kind": "relation",
        "text": "b.shape[0] == n",
        "path": "pair.py",
        "line": tie,
        "dims": ["b.shape[0]", "n"],
    }
    assert relation | {"value": None} in said
    assert from_dict(Summary, to_dict(pair.summary)) == pair.summary


def test_a_summary_from_before_the_guard_record_still_reads():
    old = {"signature": "(x: f32[n]) -> f32[n]", "inputs": [], "outputs": [], "range_constraints": [], "equalities": []}
    assert from_dict(Summary, old).guards == ()


def test_a_summary_from_before_equality_records_reads_its_texts_as_records():
    old = {"signature": "(x: f32[n], y: f32[?]) -> f32[n]", "inputs": [], "outputs": [], "range_constraints": []}
    read = from_dict(Summary, old | {"equalities": ["y.shape[0] = n + 1"]})
    assert read.equalities == (Equality("y.shape[0]", "n + 1"),)  # its dims not known: a 2.4 report has none
    with pytest.raises(ValueError, match=r"^equalities\[0\]: 'n' is no equality \(left = right\)$"):
        from_dict(Summary, old | {"equalities": ["n"]})


@pytest.mark.slow
def test_show_prints_the_guards_each_line_made(guarded):
    command = [sys.executable, "-m", "exportlens.cli", "show", "--python", sys.executable, "pair.py:Pair", "--no-graph"]
    result = subprocess.run(command, cwd=guarded.root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    tie = line_of(guarded, "pair.py", "return doubled + b")
    assert f"  guards:\n    line {tie}: b.shape[0] == n\n" in result.stdout
    assert not TORCH_SYMBOL.search(result.stdout.split("  guards:")[1]), result.stdout


def test_a_size_made_constant_is_one_guard_said_as_the_constant(guarded):
    """torch records a width left open (`?`) pinned by a Linear(8) both as the guard
    `x.shape[1] == 8` and as the constant: the record says it once, as the specialization."""
    report = guarded.check()
    wide = next(m for m in report.modules if m.target.endswith(":Wide"))
    line = line_of(guarded, "wide.py", "return self.proj(x), y")
    on_line = [g for g in wide.summary.guards if g.line == line]
    assert on_line == [Guard(GuardKind.SPECIALIZATION, "x.shape[1] == 8", "wide.py", line, ("x.shape[1]",), 8)], on_line
