"""A weight of the wrong shape: forward fails in eager too.

From: user reports (a bug the export is blamed for).
Expect: the marked line; it is a bug in the code, not an export problem.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 4))

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 8),)

    def forward(self, x):
        x = x.relu()
        h = x * 2
        return h @ self.weight  # expect: EL405
