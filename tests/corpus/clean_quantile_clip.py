"""Negative control: activations clipped at their own 99th percentile with `torch.quantile`.

From: pytorch/pytorch#173659 (`DataDependentOutputException: aten.equal.default` when
exporting `torch.quantile`).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: random activations and activations with one large outlier.
Before torch 2.12: EL301 on line 27, as torch's quantile calls aten.equal on the fake tensors, which cannot answer it (checked 2.9.1, 2.10.0, 2.11.0).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 16),)

    @staticmethod
    def probe_inputs():
        spike = torch.randn(4, 16)
        spike[0, 0] = 100.0
        return [(torch.randn(4, 16),), (spike,)]

    def forward(self, x):
        x = x * 1.0
        hi = torch.quantile(x.flatten(), 0.99)
        return x.clamp(max=hi)
