"""Frames padded to at least 16 by writing them into a zero canvas of `max(n, 16)` rows.

From: pytorch/pytorch#146046 (sliced assignments into a fixed-size buffer give a dynamic
dim that torch.export refuses or makes constant, depending on the example's size).
Expect: the marked line: the in-place copy needs `n <= max(16, n)`, true for every `n`,
which torch 2.13 cannot prove over the declared range and reports as a violation of `n`'s
range.
Remedy: the same write as `frames = torch.slice_scatter(frames, x, dim=0, start=0, end=n)`,
which makes the same tensor without an in-place copy, and exports over the whole range.
Probes: `n` 3 (padded to 16), 16 and 40 (no padding).
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)

    @staticmethod
    def example_inputs():
        return (torch.randn(9, 6),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("n", min=2, max=128)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(3, 6),), (torch.randn(16, 6),), (torch.randn(40, 6),)]

    def forward(self, x):
        n = x.shape[0]
        frames = x.new_zeros(max(n, 16), x.shape[1])
        frames[:n] = self.proj(x)  # expect: EL201, fix exports
        return frames.cumsum(0)
