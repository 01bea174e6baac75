"""A `torch.cond` branch that counts calls in a buffer.

From: torch's higher-order-op tests (`cond` branches may not mutate module state).
Expect: the marked line (inside the branch), not the `torch.cond` call.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    @staticmethod
    def example_inputs():
        return (torch.randn(4),)

    def forward(self, x):
        x = x * 2

        def bigger(v):
            self.count.add_(1)  # expect: EL301
            return v.cos()

        def smaller(v):
            return v.sin()

        return torch.cond(x.sum() > 0, bigger, smaller, (x,))
