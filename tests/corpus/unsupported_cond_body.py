"""A data-dependent Python branch inside a `torch.cond` branch.

From: torch's higher-order-op tests (branch bodies are traced like forward).
Expect: the marked line, inside the branch (where torch's trace ends), not the `torch.cond` call.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 4),)

    def forward(self, xs):
        xs = xs * 1.0

        def positive(v):
            if v.max() > 1:  # expect: EL301
                return v.cos()
            return v.sin()

        def negative(v):
            return v.tanh()

        return torch.cond(xs.sum() > 0, positive, negative, (xs,))
