"""Negative control: a padding mask built from `arange(lengths.max().item())`.

From: pytorch/pytorch#113002 (this failed export in 2023 until the value was bounded by hand;
torch 2.13 exports it as written).
Expect: clean.
Probes: lengths [5, 4, 4, 4] and [1, 1, 1, 1].
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([5, 4, 4, 4]),)

    @staticmethod
    def probe_inputs():
        return [(torch.tensor([5, 4, 4, 4]),), (torch.tensor([1, 1, 1, 1]),)]

    def forward(self, lengths):
        longest = lengths.max().item()
        row = torch.arange(longest)
        return (row < lengths[:, None]).float()[:, :, None]
