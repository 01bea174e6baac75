"""A slice assignment into a canvas sized ``max(n, 16)`` (issue 36): torch 2.13 cannot prove
``n <= max(16, n)`` for the in-place copy and refuses ``n``'s range, though every size
holds. The fix writes the line as ``torch.slice_scatter``, the same tensor, proven by
exporting it, serving the range and agreeing with eager on sizes that pad and that do not."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checked

from exportlens.exporter.edit.slice_writes import slice_write

PADDED = """\
import torch
from torch import nn


class PadSpectrogram(nn.Module):
    def forward(self, spec):
        frames = spec.shape[0]
        canvas = spec.new_zeros(max(frames, 16), spec.shape[1])
        canvas[:frames] = spec * 2
        return canvas.mean(1)
"""

SPEC = """
[tool.exportlens.modules."padded.py:PadSpectrogram"]
inputs = { spec = "f32[frames, 5]" }
dims = { frames = { min = 2, max = 96, example = 7 } }
"""


def test_a_slice_assignment_is_written_as_slice_scatter():
    found = slice_write(PADDED, 9)
    assert found is not None
    assert (found.written, found.rewritten) == (
        "canvas[:frames] = spec * 2",
        "canvas = torch.slice_scatter(canvas, spec * 2, dim=0, start=0, end=frames)",
    )
    assert "        canvas = torch.slice_scatter(canvas, spec * 2, dim=0, start=0, end=frames)\n" in found.text
    assert slice_write("x[:, 2:n] = y\n", 1).rewritten == "x = torch.slice_scatter(x, y, dim=1, start=2, end=n)"


@pytest.mark.parametrize(
    "line",
    [
        "self.cache[:n] = x\n",  # a module's buffer: rebinding a local would not write it
        "x[::2] = y\n",  # a step
        "x[:n, :m] = y\n",  # two axes cut
        "x[0] = y\n",  # an index, not a slice
        "y = x[:n]\n",  # a read
    ],
)
def test_other_writes_are_left_as_they_are(line: str):
    assert slice_write(line, 1) is None


@pytest.mark.slow
def test_a_range_refused_on_a_slice_assignment_gets_the_slice_scatter_fix_proven(tmp_path: Path):
    (tmp_path / "padded.py").write_text(PADDED, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")
    [module] = checked(tmp_path)
    [finding] = module["findings"]
    assert (finding["code"], finding["line"]) == ("EL201", 9)
    [preferred] = [f for f in finding["fixes"] if f["preferred"]]
    assert preferred["title"].startswith(
        "Write `canvas = torch.slice_scatter(canvas, spec * 2, dim=0, start=0, end=frames)`"
        " for `canvas[:frames] = spec * 2`"
    )
    assert (preferred["verified"], preferred["rank"], preferred["remaining"]) == ("serves", "rewrite", 0)
    assert preferred["probes"] and all(p["agrees"] for p in preferred["probes"]), preferred["probes"]
