"""A hidden size declared dynamic that feeds an `nn.LayerNorm`.

From: user reports (every axis marked dynamic).
Expect: the marked line; the preferred fix makes `hidden` static and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 5, 16),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", max=64), 2: Dim("hidden", max=64)}}

    def forward(self, x):
        x = x * 0.5
        x = x + 1
        return self.norm(x)  # expect: EL204, fix exports
