"""`bool()` of a comparison on the input's maximum.

From: torch's ExportDB (`dynamic_shape_if_guard`'s data-dependent sibling).
Expect: the marked line, in the words the line writes.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.rand(3, 3),)

    def forward(self, x):
        y = x.sigmoid()
        big = bool(y.max() > 0.99)  # expect: EL101
        return y * 2 if big else y
