"""A mixture of experts: top-2 gate, an `.item()` capacity, `nonzero` per expert, an early `continue`.

From: the issue's MoE layer, written as people write it (user reports of MoE routers failing torch.export).
Expect: the marked line, naming the value as written (`(scores > 0.5).sum().item()`), not torch's `u0`.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))

    @staticmethod
    def example_inputs():
        return (torch.randn(6, 8),)

    def forward(self, x):
        scores = self.gate(x).softmax(-1)
        weights, chosen = scores.topk(2, dim=-1)
        out = torch.zeros_like(x)
        capacity = int((scores > 0.5).sum().item())  # expect: EL101
        for e, expert in enumerate(self.experts):
            idx = (chosen == e).nonzero()[:, 0]
            if idx.numel() == 0:
                continue
            out[idx] += expert(x[idx]) * weights[idx, :1]
        return out[:capacity]
