"""A branch on how many positions `nonzero` found, to keep at most 20.

From: pytorch/pytorch#135618 (`if y.numel() < 200:` on a data-dependent size fails export).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: `hits[:20]` is every hit when there are fewer than 20.
Probes: inputs with no positive value, 3 of them, and 30 of them.
Before torch 2.13: EL101 on line 29, its fix does not export, as in the torch.cond, torch's own kernels still guard on the unbacked count (checked 2.9.1, 2.10.0, 2.11.0, 2.12.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(40),)

    @staticmethod
    def probe_inputs():
        few = -torch.ones(40)
        few[:3] = 1
        many = -torch.ones(40)
        many[:30] = 1
        return [(-torch.ones(40),), (few,), (many,)]

    def forward(self, x):
        hits = torch.nonzero(x > 0).squeeze(-1)
        if hits.numel() < 20:  # expect: EL101, fix exports
            return hits.float().sum()
        return hits[:20].float().sum()
