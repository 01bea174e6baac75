"""Negative control: a 0-d tensor used directly as a size when building a new tensor.

From: pytorch/pytorch#116336 (a 0-d tensor inside the shapes given to `torch.empty` makes
export fail: "there is a 0d tensor inside of your shapes").
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: sizes 1, 3 and 8.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 4), torch.tensor(3))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(2, 4), torch.tensor(n)) for n in (1, 3, 8)]

    def forward(self, x, extra):
        x = x * 1.0
        pad = torch.zeros(x.shape[0], extra)
        return torch.cat([x, pad], dim=1)
