"""`topk` with `k` read from a tensor, then a branch on how many came back.

From: user reports (dynamic top-k in retrieval heads).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(10), torch.tensor(4))

    def forward(self, scores, k):
        scores = scores.float()
        kk = k.item()
        top = scores.topk(kk).values
        if top.numel() > 3:  # expect: EL101
            return top[:3]
        return top
