"""Negative control: `seq + 1` and `seq` tokens, shifted and added.

From: the issue's first row, without the branch.
Expect: clean.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        return x[1:] + y
