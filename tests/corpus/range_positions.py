"""A learned position table added to a sequence declared longer than the table.

From: user reports (positional embeddings with `max_len` below the declared sequence range).
Expect: the marked line; the preferred fix lowers `seq`'s max and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(128, 16))

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 10, 16),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", min=2, max=1024)}}

    def forward(self, x):
        x = x * 2.0
        seq = x.shape[1]
        return x + self.pos[:seq]  # expect: EL201, fix exports
