"""An `int()` of an argmax used to pick a Python list entry.

From: user reports (choosing an expert or a head by argmax).
Expect: the marked line (`int()` asks for the value), named as the line writes it.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4),)

    def forward(self, x):
        scale = [1.0, 2.0, 3.0, 4.0]
        y = x.softmax(-1)
        best = int(y.argmax())  # expect: EL101
        return y * scale[best]
