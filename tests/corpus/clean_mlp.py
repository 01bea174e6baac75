"""Negative control: an MLP with a dynamic batch.

Expect: clean.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))

    @staticmethod
    def example_inputs():
        return (torch.randn(3, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=64)}}

    def forward(self, x):
        return self.net(x)
