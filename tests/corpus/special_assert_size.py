"""An `assert` on a dynamic size.

From: user reports (shape asserts left in forward).
Expect: the marked line; the preferred fix makes `seq` static and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 64),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", max=256)}}

    def forward(self, x):
        x = x.relu()
        y = x * 3
        assert y.shape[1] == 64, "expects 64 features"  # expect: EL204, fix exports
        return y
