"""A residual connection across a projection whose width is declared apart.

From: user reports (`hidden` and `width` declared as two Dims).
Expect: the marked line; the preferred fix declares them equal and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 8), torch.randn(3, 8))

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=32)}, "skip": {0: Dim("skip_batch", max=32)}}

    def forward(self, x, skip):
        x = x * 0.5
        h = x.tanh()
        return h + skip  # expect: EL202, fix exports
