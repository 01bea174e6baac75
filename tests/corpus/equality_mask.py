"""An attention mask whose length is declared apart from the sequence.

From: user reports (masks and inputs given separate Dims).
Expect: the marked line; the preferred fix declares them equal and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 7, 8), torch.ones(2, 7))

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", max=128)}, "mask": {1: Dim("mask_len", max=128)}}

    def forward(self, x, mask):
        x = x * 0.5
        scores = x.sum(-1)
        return scores.masked_fill(mask == 0, -1e4)  # expect: EL202, fix exports
