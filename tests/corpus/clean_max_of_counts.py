"""Negative control: two variable-length selections padded to the longer one with Python's `max`.

From: pytorch/pytorch#135632 (`max(x.shape[0], y.shape[0])` over data-dependent sizes fails
export on `u1 > u0`).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: more positives in `x`, more in `y`, and none in either.
"""

import torch
from torch import nn
from torch.nn import functional as F


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([1.0, -1.0, 2.0, 3.0]), torch.tensor([-1.0, 4.0, -2.0, -3.0]))

    @staticmethod
    def probe_inputs():
        return [
            (torch.tensor([1.0, -1.0, 2.0, 3.0]), torch.tensor([-1.0, 4.0, -2.0, -3.0])),
            (torch.tensor([-1.0, -1.0, 2.0, -3.0]), torch.tensor([1.0, 4.0, 2.0, -3.0])),
            (-torch.ones(4), -torch.ones(4)),
        ]

    def forward(self, x, y):
        a = x[x > 0]
        b = y[y > 0]
        n = max(a.shape[0], b.shape[0])
        return torch.stack([F.pad(a, (0, n - a.shape[0])), F.pad(b, (0, n - b.shape[0]))])
