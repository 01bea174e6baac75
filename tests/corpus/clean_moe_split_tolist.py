"""Negative control: tokens sorted by expert, then split by each expert's count read with `.tolist()`.

From: RBLN-SW/vllm-rbln#534 (a MoE layer's `.tolist()` pattern reworked for torch.export).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: random `x` and `x` of zeros (every token to one expert, the other counts zero).
"""

import torch
from torch import nn
from torch.nn import functional as F


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
        return [(torch.randn(6, 8),), (torch.zeros(6, 8),)]

    def forward(self, x):
        chosen = self.gate(x).argmax(-1)
        order = chosen.argsort()
        counts = F.one_hot(chosen, 4).sum(0).tolist()
        groups = x[order].split(counts)
        out = torch.cat([expert(g) for expert, g in zip(self.experts, groups)])
        return torch.empty_like(out).index_copy_(0, order, out)
