"""A padding mask over `int(lengths.max())` positions.

From: pytorch/pytorch#113002 (the longest length read from a tensor and used as a size fails
export; `.item()` with a bound was the answer there).
Expect: the marked line (`int()` asks for the value itself, which export does not have); the
preferred fix exports.
Remedy: `lengths.max().item()` instead of `int(...)`: the same number, kept symbolic
(torch 2.13 exports `torch.arange` of it, see clean_lengths_mask.py); or
`torch.sym_int(lengths.max().item())`.
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
        lengths = lengths.long()
        longest = int(lengths.max())  # expect: EL101, fix exports
        row = torch.arange(longest)
        return (row < lengths[:, None]).float()
