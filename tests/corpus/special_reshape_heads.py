"""A reshape that hard-codes the sequence length with the heads.

From: user reports (attention heads split with the training length).
Expect: the marked line; the preferred fix writes the size from the input and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 16, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", max=128)}}

    def forward(self, x):
        x = x * 1.0
        b = x.shape[0]
        return x.reshape(b, 16, 2, 4)  # expect: EL204, fix exports
