"""A sequence trimmed by two added to an input declared as another dim's derived size.

From: user reports of derived dims in dynamic_shapes; torch 2.13 says "The values of n = ... must
always be related to the values of m - 2 = ... by n = m", which exportlens read as torch's text (EL205).
Expect: the marked line; the preferred fix declares `n = m` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x * 2
        return x[2:] + y  # expect: EL203, fix exports
