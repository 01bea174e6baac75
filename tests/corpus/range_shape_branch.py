"""A Python `if` on a dynamic size: the example's side becomes a bound.

From: torch's dynamic-shapes tests (`test_export_dynamic_dim_range_constraint`).
Expect: the marked line; the preferred fix lowers `seq`'s max and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("seq", min=2, max=64)}}

    def forward(self, x):
        x = x * 2
        y = x.relu()
        if y.shape[0] > 16:  # expect: EL201, fix exports
            return y[:16]
        return y
