"""A derived size added to a fixed window of its root, with no max declared.

From: user reports of derived dims in dynamic_shapes (a guard on `dy - 6` with an unbounded root).
Expect: the marked line, said of `dy` (`dy <= 24`); the preferred fix sets its max and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x * 1.0
        return y + x[:-6] + x[3:9].repeat(3, 1)[: y.shape[0]]  # expect: EL201, fix exports
