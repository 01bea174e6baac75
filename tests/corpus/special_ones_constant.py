"""A constant-size tensor added to an input declared dynamic.

From: torch's dynamic-shapes tests (specialization through broadcasting).
Expect: the marked line; the preferred fix makes `n` static and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("n", max=64)}}

    def forward(self, x):
        x = x * 2
        bias = torch.ones(8)
        return x + bias  # expect: EL204, fix exports
