"""`torch.cond` branches that return different dtypes.

From: torch's higher-order-op tests (`cond` branches must agree on outputs).
Expect: the marked line (the `torch.cond` call).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 4),)

    def forward(self, x):
        x = x * 2

        def whole(v):
            return v.sum(0)

        def halves(v):
            return v.sum(0).long()

        return torch.cond(x.mean() > 0, whole, halves, (x,))  # expect: EL301
