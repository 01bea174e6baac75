"""A Python `if` on a boolean flag passed as a tensor input.

From: pytorch/pytorch#144691 (a branch on data-dependent values must become `torch.cond`
for export; discussed with `nonzero` inside the branches).
Expect: the marked line; the preferred fix exports.
Remedy: `torch.cond(use_gate, gated, plain, (x,))` keeps both branches (both return a
tensor of the same shape), or `torch.where(use_gate, x * x.sigmoid(), x)`.
Probes: the flag true and false.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 4), torch.tensor(True))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(2, 4), torch.tensor(True)), (torch.randn(2, 4), torch.tensor(False))]

    def forward(self, x, use_gate):
        x = x * 1.5
        if use_gate:  # expect: EL101, fix exports
            x = x * x.sigmoid()
        return x.sum(-1)
