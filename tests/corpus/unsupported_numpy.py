"""A round trip through NumPy inside forward.

From: user reports (post-processing with NumPy left in forward).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        x = x.relu()
        y = x * 2
        arr = y.numpy()  # expect: EL301
        return torch.from_numpy(arr.clip(0, 1))
