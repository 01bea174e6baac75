"""A storage pointer read in forward.

From: user reports (caching keyed on `data_ptr()`).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4),)

    def forward(self, x):
        x = x + 1
        y = x.exp()
        key = y.data_ptr()  # expect: EL301
        return y * (key % 2 + 1)
