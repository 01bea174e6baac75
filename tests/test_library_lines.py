"""The culprit line through code the user did not write: a data-dependent failure
raised inside an installed package stands on the user's line that called into it,
and names the library line in its message and as related information.

The package is installed into a folder outside the project (on ``sys.path``), as
site-packages would be: its files are not the project's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import line_of, only

DETLIB = """
import torch


def keep_boxes(boxes, scores, threshold):
    keep = boxes[scores > threshold]
    n = int((scores > threshold).sum())
    return keep.new_zeros(n, 4) + keep[:1]
"""

DETECTOR = """
    import torch
    from torch import nn

    from detlib.ops import keep_boxes

    class Detector(nn.Module):
        def forward(self, boxes, scores):
            boxes = boxes * 1.0
            scores = scores.sigmoid()
            kept = keep_boxes(boxes, scores, 0.5)
            return kept * 2
"""


def _installed(tmp_path_factory: pytest.TempPathFactory, package: str, module: str, text: str):
    """``package.module`` installed outside the project, importable as site-packages is; the
    module's file, then gone again."""
    lib = tmp_path_factory.mktemp("lib")
    (lib / package).mkdir()
    (lib / package / "__init__.py").write_text("")
    (lib / package / f"{module}.py").write_text(textwrap.dedent(text).lstrip("\n"))
    sys.path.insert(0, str(lib))
    yield lib / package / f"{module}.py"
    sys.path.remove(str(lib))
    for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        del sys.modules[name]


@pytest.fixture
def detlib(tmp_path_factory: pytest.TempPathFactory):
    """``detlib``, a package that filters boxes by their scores."""
    yield from _installed(tmp_path_factory, "detlib", "ops", DETLIB)


SCANLIB = """
import torch


def running_sum(x):
    state = torch.zeros_like(x[:, 0])
    steps = []
    for t in range(x.shape[1]):
        state = state + x[:, t]
        steps.append(state)
    return torch.stack(steps, dim=1)
"""

SCANNER = """
    import torch
    from torch import nn

    from scanlib.scan import running_sum

    class Scanner(nn.Module):
        def forward(self, x):
            h = x.tanh()
            return running_sum(h) * 2
"""


@pytest.fixture
def scanlib(tmp_path_factory: pytest.TempPathFactory):
    """``scanlib``, a package whose scan loops over the sequence in Python."""
    yield from _installed(tmp_path_factory, "scanlib", "scan", SCANLIB)


def _library_line(ops: Path, needle: str) -> int:
    return next(i for i, line in enumerate(ops.read_text().splitlines(), 1) if needle in line)


def test_a_data_dependent_size_inside_a_library_stands_on_the_user_s_call(project, detlib):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."det.py:Detector"]
        inputs = { boxes = "f32[n, 4]", scores = "f32[n]" }
        dims = { n = { min = 2, max = 64 } }
        """,
    )
    project.write("det.py", DETECTOR)
    finding = only(project.module("Detector").findings, "EL101")
    assert finding.line == line_of(project, "det.py", "kept = keep_boxes(")
    lib_line = _library_line(detlib, "n = int(")
    assert f"inside `detlib/ops.py:{lib_line}`, reached from line {finding.line}" in finding.message
    assert any(r.path == str(detlib) and r.line == lib_line for r in finding.related)


def test_a_dim_pinned_by_a_loop_inside_a_library_names_the_loop_and_the_user_s_call(project, scanlib):
    """A sequential scan inside an installed package (as transformers' Mamba reference path
    does): torch unrolls the loop for the example's length and pins `seq`; the finding stands
    on the user's call and names the library's loop, which torch's own message does not."""
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."scanner.py:Scanner"]
        inputs = { x = "f32[2, seq]" }
        dims = { seq = { min = 2, max = 64 } }
        """,
    )
    project.write("scanner.py", SCANNER)
    finding = only(project.module("Scanner").findings, "EL204")
    assert finding.line == line_of(project, "scanner.py", "return running_sum(h)")
    loop = _library_line(scanlib, "for t in range")
    assert finding.message.startswith(
        f"`seq` was declared dynamic, but the Python loop at `scanlib/scan.py:{loop}`"
        f" (`for t in range(x.shape[1]):`), reached from line {finding.line} (`return running_sum(h) * 2`),"
        " runs once per step of it, and torch.export unrolls it"
    ), finding.message
    assert any(r.path == str(scanlib) and r.line == loop for r in finding.related)


@pytest.mark.slow
def test_the_library_line_survives_the_worker_as_related_information_only(project, scanlib):
    """Through the CLI, the worker's report is untrusted input: a related place in an installed
    package's Python file passes (for reading), and the SARIF names it by its absolute URI.
    (No sandbox: it reads only the interpreter's own folders, and this package is installed
    through PYTHONPATH, which a job may not read; site-packages, where real ones are, it may.)"""
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."scanner.py:Scanner"]
        inputs = { x = "f32[2, seq]" }
        dims = { seq = { min = 2, max = 64 } }
        """,
    )
    project.write("scanner.py", SCANNER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent.parent), str(scanlib.parent.parent)]))
    for form in ("json", "sarif"):
        command = [sys.executable, "-m", "exportlens.cli", "check", "--format", form, "--no-cache", "--no-sandbox", "."]
        done = subprocess.run(command, cwd=project.root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
        said = json.loads(done.stdout)
        if form == "json":
            [finding] = said["modules"][0]["findings"]
            assert "the Python loop at `scanlib/scan.py:" in finding["message"], finding["message"]
            assert [r["path"] for r in finding["related"]][-1] == str(scanlib), finding["related"]
        else:
            [result] = said["runs"][0]["results"]
            uris = [r["physicalLocation"]["artifactLocation"] for r in result["relatedLocations"]]
            assert {"uri": scanlib.as_uri()} in uris, uris
