"""A difference of neighbours added to an input declared apart.

From: torch's dynamic-shapes tests (relations `dy = dx - 1` suggested by slicing).
Expect: the marked line; the preferred fix ties `m` to `n` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x * 2
        d = x[1:] - x[:-1]
        return d + y  # expect: EL203, fix exports
