"""`topk` of `min(k, n)` neighbours, with `n` a dynamic size that may be below `k`.

From: pytorch/pytorch#146990 (how to export a model using `topk` with a variable number
of neighbours).
Expect: the marked line: `topk` asks for `min(8, n) <= n`, true for every `n`, which torch
cannot prove over the declared range and reports as a violation of `n`'s range.
Remedy: a spec change, `n` min 8, where fewer than eight points never occur (checked:
`torch._check(k <= n)`, `torch.sym_min` and slicing the sorted distances each fail the same
way on torch 2.13); a model that must serve fewer points needs a second program for them.
Probes: `n` 8 and 20 (and 3, which only the program for fewer points serves).
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 8

    @staticmethod
    def example_inputs():
        return (torch.randn(20, 3),)

    @staticmethod
    def dynamic_shapes():
        return {"points": {0: Dim("n", min=2, max=256)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(8, 3),), (torch.randn(20, 3),), (torch.randn(3, 3),)]

    def forward(self, points):
        dist = (points[:, None] - points[None]).pow(2).sum(-1)
        k = min(self.k, points.shape[0])
        return dist.topk(k, largest=False).values.mean(-1)  # expect: EL201, fix exports
