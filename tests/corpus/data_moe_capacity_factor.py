"""A Switch-style expert capacity: the mean load times a capacity factor, made a Python int.

From: meta-pytorch/torchrec#3270 (`int(...)` written `torch.sym_int(...)` to make a model
torch.export compatible), huggingface/transformers#38518 (a mixture of experts' routing under
torch.export).
Expect: the marked line, said as written (`int(load.float().mean().item() * self.capacity_factor)`
asks for `capacity`), not torch's `int(1.25*float(...))`; the preferred fix exports.
Remedy: `torch.sym_int(...)` in place of `int(...)`: the same number, kept symbolic; the
slices by it then export as written (tokens past an expert's capacity are dropped).
Probes: random `x` (tokens spread over the experts, none past its capacity) and `x` of zeros
(every token to experts 0 and 1, each over its capacity: tokens dropped).
Before torch 2.10: EL101 on line 37, its fix does not export, as with torch.sym_int, torch's own kernels still guard on the capacity (checked 2.9.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4, bias=False)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))
        self.capacity_factor = 1.25

    @staticmethod
    def example_inputs():
        return (torch.randn(6, 8),)

    @staticmethod
    def probe_inputs():
        return [(torch.randn(6, 8),), (torch.zeros(6, 8),)]

    def forward(self, x):
        weight, chosen = self.gate(x).softmax(-1).topk(2, dim=-1)
        load = torch.bincount(chosen.flatten(), minlength=4)
        capacity = int(load.float().mean().item() * self.capacity_factor)  # expect: EL101, fix exports
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            token, slot = token[:capacity], slot[:capacity]
            out.index_add_(0, token, expert(x[token]) * weight[token, slot, None])
        return out
