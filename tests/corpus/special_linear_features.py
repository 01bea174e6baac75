"""A feature axis declared dynamic that feeds an `nn.Linear`.

From: user reports (every axis marked dynamic).
Expect: the marked line; the preferred fix makes `feat` static and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("feat", max=64)}}

    def forward(self, x):
        x = x * 1.0
        x = x.relu()
        return self.proj(x)  # expect: EL204, fix exports
