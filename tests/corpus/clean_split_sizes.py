"""Negative control: `torch.split` with sizes read from a tensor, then stacked means.

From: user reports (ragged batches split by per-example lengths); torch 2.13 asserts the sizes at run time.
Expect: clean.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(6, 4), torch.tensor([2, 4]))

    def forward(self, x, sizes):
        x = x.relu()
        parts = torch.split(x * 2, sizes.tolist())
        return torch.stack([p.mean(0) for p in parts])
