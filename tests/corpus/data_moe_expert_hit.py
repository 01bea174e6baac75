"""A mixture-of-experts layer that loops only over the experts a token was routed to.

From: huggingface/transformers#38518 (Mixtral's `expert_hit = (...).nonzero()` loop fails
torch.export with GuardOnDataDependentSymNode; fixed in huggingface/transformers#40114 by
looping over every expert).
Expect: the marked line: iterating a tensor whose length is how many experts were hit.
Remedy: branch-free: loop over `range(len(self.experts))`; an expert with no token gets an
empty index and `index_add_` adds nothing, so the output is the same.
Probes: `x` of zeros (every token ties, only experts 0 and 1 are hit) and random `x` (most are).
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
        return [(torch.zeros(6, 8),), (torch.randn(6, 8),), (torch.randn(6, 8) * 4,)]

    def forward(self, x):
        weight, chosen = self.gate(x).softmax(-1).topk(2, dim=-1)
        out = torch.zeros_like(x)
        hit = F.one_hot(chosen, 4).sum(dim=(0, 1)).gt(0).nonzero()
        for e in hit:  # expect: EL101, fix exports
            token, slot = torch.where(chosen == e)
            out.index_add_(0, token, self.experts[int(e)](x[token]) * weight[token, slot, None])
        return out
