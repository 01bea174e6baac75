"""`torch.arange` with a float step computed from a mask's count, then `bucketize`.

From: pytorch/pytorch#170548 (fractional patch coordinates with a step `1 / mask.sum()`
fail export on a guard about the float step's sign).
Expect: the marked line.
Remedy: branch-free: coordinates from shapes, `torch.arange(n) / count` masked to the
`count` valid positions, which gives the same buckets.
Probes: masks with 5, 1 and 10 true values.
Fixed in torch: 2.15 (it exports there, and agrees with eager on the probes: a negative
control from then on).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        mask = torch.zeros(10, dtype=torch.bool)
        mask[::2] = True
        return (mask,)

    @staticmethod
    def probe_inputs():
        one = torch.zeros(10, dtype=torch.bool)
        one[3] = True
        return [(torch.arange(10) % 2 == 0,), (one,), (torch.ones(10, dtype=torch.bool),)]

    def forward(self, mask):
        boundaries = torch.arange(1, 5) / 5.0
        step = 1.0 / mask.sum()
        coords = torch.arange(0.0, 1.0 - 1e-6, step.item())  # expect: EL101
        return torch.bucketize(coords, boundaries, right=True)
