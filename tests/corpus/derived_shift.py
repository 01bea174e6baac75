"""Inputs of `seq + 1` and `seq` tokens, and a branch on the longer.

From: the issue's first row (derived dims in the spec's own words).
Expect: the marked line, said as `seq + 1 <= 16`, i.e. `seq <= 15`; the preferred fix exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x * 1.0
        h = x[1:] + y
        if x.shape[0] > 16:  # expect: EL201, fix exports
            return h * 2
        return h
