"""Negative control: `interpolate` with a scale factor read from a tensor with `.item()`.

From: pytorch/pytorch#108779 (tracing `interpolate` with `scale_factor=factor.item()` fails
with a data-dependent guard on the float scale).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: scale 2.0 and 0.5.
Before torch 2.10: EL101 on line 26, as torch's interpolate guards on the scale read from the tensor (checked 2.9.1).
"""

import torch
from torch import nn
from torch.nn import functional as F


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 3, 8, 8), torch.tensor(2.0))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 3, 8, 8), torch.tensor(2.0)), (torch.randn(1, 3, 8, 8), torch.tensor(0.5))]

    def forward(self, x, factor):
        x = x * 1.0
        return F.interpolate(x, scale_factor=factor.item(), mode="bilinear", recompute_scale_factor=True)
