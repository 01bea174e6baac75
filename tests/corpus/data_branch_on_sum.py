"""A Python `if` on a reduction of the input: the classic data-dependent branch.

From: torch's ExportDB (`cond_predicate`, `dynamic_shape_if_guard`) and draft-export tests.
Expect: the marked line, in the words the line writes (no fix: the branch needs torch.cond).
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.ones(4, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=64)}}

    def forward(self, x):
        h = torch.relu(x)
        h = h * 2.0
        if h.sum() > 0:  # expect: EL101
            return h.cos()
        return h.sin()
