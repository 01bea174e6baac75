"""A mixture-of-experts layer that skips an expert no token was routed to.

From: huggingface/transformers#46929 (Mixtral's experts under torch.export: an empty expert
gets an empty token index and contributes nothing, so no early exit is needed).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: drop the early `continue`; `index_add_` with an empty index adds nothing.
Probes: `x` of zeros (experts 2 and 3 get no token) and random `x`.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4, bias=False)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))

    @staticmethod
    def example_inputs():
        return (torch.randn(6, 8),)

    @staticmethod
    def probe_inputs():
        return [(torch.zeros(6, 8),), (torch.randn(6, 8),)]

    def forward(self, x):
        weight, chosen = self.gate(x).softmax(-1).topk(2, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            if token.numel() == 0:  # expect: EL101, fix exports
                continue
            out.index_add_(0, token, expert(x[token]) * weight[token, slot, None])
        return out
