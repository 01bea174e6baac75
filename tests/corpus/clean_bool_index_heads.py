"""Negative control: rows picked with a boolean mask, then split into heads for attention with a mask.

From: pytorch/pytorch#180202 (`torch.export` of `sdpa` fails on CPU when the batch comes
from boolean indexing, an unbacked size).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: a mask keeping no row, one row, and all rows.
Before torch 2.13: EL101 on line 34, as torch's own scaled_dot_product_attention guards on the batch that boolean indexing leaves unbacked (checked 2.9.1, 2.10.0, 2.11.0, 2.12.1).
"""

import torch
from torch import nn
from torch.nn import functional as F


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    @staticmethod
    def example_inputs():
        return (torch.randn(3, 5, 16), torch.tensor([True, False, True]))

    @staticmethod
    def probe_inputs():
        masks = ([False, False, False], [False, True, False], [True, True, True])
        return [(torch.randn(3, 5, 16), torch.tensor(m)) for m in masks]

    def forward(self, x, keep):
        x = x[keep]
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 4).permute(2, 0, 3, 1, 4)
        allowed = torch.ones(b, 1, s, s, dtype=torch.bool)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
