"""An example batch of 1 with batch declared dynamic: torch fixes sizes 0 and 1.

From: torch's 0/1 specialization docs and user reports.
Expect: the marked line (the spec's example); the preferred fix exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():  # expect: EL204, fix exports
        return (torch.randn(1, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=64)}}

    def forward(self, x):
        x = x * 2
        return x.sum(1)
