"""Attention scaled by `math.sqrt` of a head size declared dynamic, then a fixed projection.

From: user reports (head size marked dynamic).
Expect: the marked line (`math.sqrt` of the size fixes it); the preferred fix makes `head` static and exports.
"""

import torch
from torch import nn
from torch.export import Dim
import math


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 8)

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 6, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"q": {1: Dim("seq", max=64), 2: Dim("head", max=64)}}

    def forward(self, q):
        q = q * 1.0
        scale = math.sqrt(q.shape[-1])  # expect: EL204, fix exports
        scores = (q @ q.transpose(1, 2)) / scale
        attn = scores.softmax(-1) @ q
        return self.out(attn)
