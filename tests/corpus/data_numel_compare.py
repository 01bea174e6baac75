"""A mask's kept elements compared with the input's count: an integer comparison of two `numel()`s.

From: the issue's report that exportlens called `kept.numel() == x.numel()` "a tensor" (user reports
of masked selections followed by a size check).
Expect: the marked line, said as written (`kept.numel() == x.numel()`), a comparison of sizes, not a tensor's truth.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 8), torch.ones(4, 8, dtype=torch.bool))

    def forward(self, x, mask):
        kept = x[mask]
        if kept.numel() == x.numel():  # expect: EL101
            return x
        return x * 2
