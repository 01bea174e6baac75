"""`range()` over a count read from a tensor.

From: torch's draft-export tests (`.item()` used as a loop bound).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 2), torch.tensor(3))

    def forward(self, x, steps):
        x = x + 1
        n = steps.item()
        for _ in range(n):  # expect: EL101
            x = x * 0.5
        return x
