"""A matmul whose inner sizes are declared independent.

From: torch's dynamic-shapes tests (`test_export_dynamic_dim_matmul`-style equalities).
Expect: the marked line; the preferred fix declares them equal and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 6), torch.randn(6, 2))

    @staticmethod
    def dynamic_shapes():
        return {"a": {1: Dim("k", max=64)}, "b": {0: Dim("k2", max=64)}}

    def forward(self, a, b):
        a = a.relu()
        b = b.relu()
        return a @ b  # expect: EL202, fix exports
