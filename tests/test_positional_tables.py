"""A positional table sliced by a number where the input's length belongs: the fix keeps
the dim dynamic by slicing the table by the input's own size, instead of making it static."""

from __future__ import annotations

from conftest import line_of, only

from exportlens.exporter.core.report import Status

ENCODER = """
import torch
from torch import nn


class FrameEncoder(nn.Module):
    def __init__(self, dim: int = 16, frames: int = 200):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.pos_embed = nn.Parameter(torch.randn(1, frames, dim))

    def forward(self, x):
        x = self.proj(x)
        return x + self.pos_embed[:, :200]
"""


def test_a_table_sliced_by_a_number_is_sliced_by_the_inputs_length(project):
    """A speech encoder adds its positional table cut at the 200 frames of the example (as in
    pytorch/executorch#13373, where a hard-coded sequence length pinned the export): torch
    pins `frames` to 200, and the preferred fix is not "make `frames` static" but the table
    sliced by `x.shape[1]`, after which the module exports with `frames` dynamic."""
    project.write("encoder.py", ENCODER)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."encoder.py:FrameEncoder"]
        inputs = { x = "f32[batch, frames, 16]" }
        dims = { batch = { min = 1, max = 8 }, frames = { min = 2, max = 200 } }
        """,
    )
    finding = only(project.module("FrameEncoder").findings, "EL204")
    assert finding.line == line_of(project, "encoder.py", "self.pos_embed[:, :200]")
    [fix] = [f for f in finding.fixes if f.preferred]
    assert fix.action == "Write `x.shape[1]` for the `200` this line hard-codes", fix.action
    project.apply(fix)
    assert "return x + self.pos_embed[:, :x.shape[1]]" in project.read("encoder.py")
    after = project.module("FrameEncoder")
    assert after.status is Status.EXPORTED, [str(f) for f in after.findings]
