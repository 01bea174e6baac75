"""A decoder stage that upsamples by 2 and concatenates the encoder's skip, declared apart.

From: pytorch/pytorch#124884 (a model with `F.interpolate(x, scale_factor=2)` exported with
dynamic sizes fails at the interpolate step).
Expect: the marked line: the skip's size must be twice the input's; the preferred fix
declares `side2 = 2*side` and exports.
Remedy: a spec change: `side2 = 2*side`.
Probes: `side` 4, 9 and 32 with the skip at twice that.
"""

import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 4, 8, 8), torch.randn(1, 4, 16, 16))

    @staticmethod
    def dynamic_shapes():
        side, side2 = Dim("side", min=2, max=64), Dim("side2", min=4, max=128)
        return {"x": {2: side, 3: side}, "skip": {2: side2, 3: side2}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 4, s, s), torch.randn(1, 4, 2 * s, 2 * s)) for s in (4, 9, 32)]

    def forward(self, x, skip):
        x = x * 1.0
        up = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return torch.cat([up, skip], dim=1)  # expect: EL203, fix exports
