"""Negative control: a count read with `.item()`, bounded with `torch._check` first.

From: torch's export docs on `torch._check`.
Expect: clean.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(8, 4), torch.tensor(5))

    def forward(self, x, k):
        n = k.item()
        torch._check(n >= 0)
        torch._check(n <= x.shape[0])
        return x[:n].sum(0)
