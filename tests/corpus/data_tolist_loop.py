"""A Python loop over a tensor's values read with `.tolist()`.

From: user reports (per-example lengths turned into a Python loop).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 8), torch.tensor([2, 3, 1]))

    def forward(self, x, lengths):
        x = x * 2
        total = x.new_zeros(())
        for n in lengths.tolist():
            if n > 2:  # expect: EL101
                total = total + x[:n].sum()
        return total
