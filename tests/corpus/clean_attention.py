"""Negative control: self-attention over a dynamic batch and sequence.

From: transformers-style attention blocks.
Expect: clean.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 7, 16),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", max=32), 1: Dim("seq", min=2, max=128)}}

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)
        q = q.view(b, t, 2, 8).transpose(1, 2)
        k = k.view(b, t, 2, 8).transpose(1, 2)
        v = v.view(b, t, 2, 8).transpose(1, 2)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return out.transpose(1, 2).reshape(b, t, 16)
