"""A user's own `torch._check` that the sequence is a multiple of 8.

From: torch's export tests (`torch._check` on backed sizes becomes a guard).
Expect: the marked line, the user's own check: the first line that requires `seq % 8 == 0`, which the
declared range does not promise; the preferred fix declares `seq = 8*_seq` in the `Dim` call and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(16, 4),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("seq", min=8, max=512)}}

    def forward(self, x):
        x = x.relu()
        seq = x.shape[0]
        torch._check(seq % 8 == 0)  # expect: EL201, fix exports
        return x.view(-1, 8, 4)
