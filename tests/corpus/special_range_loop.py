"""A Python loop over a dynamic size: one iteration per row, so the size is fixed.

From: user reports (looping over the batch in forward).
Expect: the marked line.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 4),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=16)}}

    def forward(self, x):
        x = x + 1
        rows = []
        for i in range(x.shape[0]):  # expect: EL204
            rows.append(x[i] * i)
        return torch.stack(rows)
