"""A mixture of experts that routes each token to its top 2 experts."""

import torch
from torch import nn


class Expert(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)


class MoE(nn.Module):
    def __init__(self, dim: int = 32, n_experts: int = 4, top_k: int = 2):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList([Expert(dim, 2 * dim) for _ in range(n_experts)])

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(-1, d)
        weights, chosen = self.gate(tokens).softmax(-1).topk(self.top_k, dim=-1)
        out = torch.zeros_like(tokens)
        for i, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == i)
            if rows.numel() == 0:
                continue
            out[rows] += weights[rows, slot, None] * expert(tokens[rows])
        return out.reshape(b, t, d)
