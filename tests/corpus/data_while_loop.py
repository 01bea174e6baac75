"""A `while` loop whose condition reads tensor values.

From: user reports (iterative refinement written as a Python loop); ExportDB's guidance to use
`torch.cond` / `while_loop`.
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.full((3,), 8.0),)

    def forward(self, x):
        x = x.abs()
        x = x + 1.0
        while x.max() > 1.0:  # expect: EL101
            x = x / 2
        return x
