"""The culprit line through code the user did not write: a data-dependent failure
raised inside an installed package stands on the user's line that called into it,
and names the library line in its message and as related information.

The package is installed into a folder outside the project (on ``sys.path``), as
site-packages would be: its files are not the project's."""

from __future__ import annotations

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


@pytest.fixture
def detlib(tmp_path_factory: pytest.TempPathFactory):
    """``detlib`` installed outside the project, importable as site-packages is."""
    lib = tmp_path_factory.mktemp("lib")
    (lib / "detlib").mkdir()
    (lib / "detlib" / "__init__.py").write_text("")
    (lib / "detlib" / "ops.py").write_text(textwrap.dedent(DETLIB).lstrip("\n"))
    sys.path.insert(0, str(lib))
    yield lib / "detlib" / "ops.py"
    sys.path.remove(str(lib))
    for name in [m for m in sys.modules if m == "detlib" or m.startswith("detlib.")]:
        del sys.modules[name]


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
