"""A value read with `.item()` compared to a constant before slicing.

From: torch's export tests for `torch._check` (`test_export_with_inline_constraints`).
Expect: the marked line; the preferred `torch._check` fix exports.
Before torch 2.10: EL101 on line 20, its fix does not export, as once the fast path is dropped, torch's slicing still guards on the sign of `n` (checked 2.9.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(8, 4), torch.tensor(5))

    def forward(self, x, k):
        x = x.relu()
        n = k.item()
        if n > 8:  # expect: EL101, fix exports
            n = 8
        return x[:n].sum(0)
