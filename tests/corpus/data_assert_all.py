"""A Python `assert` on tensor values.

From: user reports (input validation inside forward).
Expect: the marked line; the preferred fix exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.rand(4, 4),)

    def forward(self, x):
        y = x * 3
        y = y - 1
        assert (x >= 0).all(), "inputs must be non-negative"  # expect: EL101, fix exports
        return y.sqrt()
