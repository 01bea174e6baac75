"""Indices from `nonzero` reshaped into pairs of a fixed count.

From: torch's draft-export tests (unbacked sizes meeting a hard-coded view).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([1.0, 0.0, 2.0, 3.0]),)

    def forward(self, x):
        x = x.abs()
        idx = torch.nonzero(x)
        if idx.shape[0] % 2 == 1:  # expect: EL101
            idx = idx[1:]
        return idx.view(-1, 2)
