"""A reshape into halves added to an input declared apart.

From: the issue's second row (a broadcast mismatch between declared dims).
Expect: the marked line; the preferred fix declares `m = n` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x * 1.0
        a = x.reshape(2, -1, 8)
        return a[0] + y  # expect: EL202, fix exports
