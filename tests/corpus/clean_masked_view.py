"""Negative control: a boolean-mask selection reshaped into rows of four.

From: user reports; torch 2.13 turns the divisibility into a runtime assertion.
Expect: clean.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 6), torch.tensor([[True, False] * 3] * 4))

    def forward(self, x, mask):
        x = x * 1.0
        picked = x[mask]
        return picked.view(4, -1)
