"""Two features concatenated along their last axis, with rows declared independent.

From: torch's dynamic-shapes tests (equalities suggested by `cat`).
Expect: the marked line; the preferred fix declares them equal and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(5, 4), torch.randn(5, 6))

    @staticmethod
    def dynamic_shapes():
        return {"a": {0: Dim("rows_a", max=64)}, "b": {0: Dim("rows_b", max=64)}}

    def forward(self, a, b):
        a = a * 2
        b = b + 1
        return torch.cat([a, b], dim=1)  # expect: EL202, fix exports
