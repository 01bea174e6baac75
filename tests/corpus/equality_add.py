"""Two inputs declared with independent dims that the code adds.

From: torch's dynamic-shapes tests (`test_export_dynamic_dim_not_1`, equality suggestions).
Expect: the marked line; the preferred fix declares them equal and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 8), torch.randn(4, 8))

    @staticmethod
    def dynamic_shapes():
        return {"a": {0: Dim("rows_a", max=64)}, "b": {0: Dim("rows_b", max=64)}}

    def forward(self, a, b):
        a = a.relu()
        b = b.relu()
        return a + b  # expect: EL202, fix exports
