"""Negative control: segment ids from `repeat_interleave` with tensor repeats, added to packed rows.

From: Lightning-AI/lightning-thunder#173 (`repeat_interleave` with a tensor of repeats is
data-dependent; `output_size` makes it not).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: counts [1, 2, 3], [6, 0, 0] and [2, 2, 2] over 6 rows.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.segment = nn.Embedding(3, 8)

    @staticmethod
    def example_inputs():
        return (torch.randn(6, 8), torch.tensor([1, 2, 3]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(6, 8), torch.tensor(c)) for c in ([1, 2, 3], [6, 0, 0], [2, 2, 2])]

    def forward(self, x, counts):
        x = x * 1.0
        ids = torch.repeat_interleave(torch.arange(counts.shape[0]), counts)
        return x + self.segment(ids)
