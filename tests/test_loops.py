"""A Python loop over a dynamic dim: torch.export runs the loop while it traces, so the program
holds one copy of the body per step of the example. The finding stands on the `for` line and
says so, in the user's dim name."""

from __future__ import annotations

from conftest import line_of, only

SCAN = """
import torch
from torch import nn


class RecurrentScan(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.in_proj = nn.Linear(dim, dim)
        self.decay = nn.Parameter(torch.full((dim,), 0.9))

    def forward(self, x):
        b, l, d = x.shape
        u = self.in_proj(x)
        h = torch.zeros(b, d)
        outs = []
        for i in range(l):
            h = self.decay * h + u[:, i]
            outs.append(h)
        return torch.stack(outs, dim=1)
"""


def test_a_loop_over_a_dynamic_dim_is_said_as_a_loop_unrolled_for_the_example(project):
    """A sequential scan over the sequence (as in pytorch/pytorch#148980, a loop over
    `x.shape[0]` that torch.export unrolls, and state-spaces/mamba#740's scan over a varying
    length): on the `for` line, saying the loop is unrolled for the example's steps."""
    project.write("scan.py", SCAN)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."scan.py:RecurrentScan"]
        inputs = { x = "f32[batch, seq, 8]" }
        dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64, example = 5 } }
        """,
    )
    finding = only(project.module("RecurrentScan").findings, "EL204")
    assert finding.line == line_of(project, "scan.py", "for i in range(l):")
    assert finding.message == (
        "`seq` was declared dynamic, but the Python loop on line 16 (`for i in range(l):`) runs once per"
        " step of it, and torch.export unrolls it for the example's 5 steps: the program takes only `seq` = 5"
    ), finding.message
