"""A table row picked by a 0-d integer tensor, then used to slice.

From: pytorch/pytorch#182345 (`torch.export` fails when indexing with a scalar tensor).
Expect: the marked line (the slice's end is read from the tensor's value); the preferred fix
exports.
Remedy: `torch.sym_int(n.item())` in place of `int(n)`: the same number, kept symbolic (torch
2.13 slices by it as eager does); or `torch.narrow`/`index_select` with the tensor.
Probes: `n` 0, 3 and 8.
Before torch 2.10: EL101 on line 30, its fix does not export, as with `n.item()`, torch's indexing still guards on its sign (checked 2.9.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(8, 4))

    @staticmethod
    def example_inputs():
        return (torch.tensor(3),)

    @staticmethod
    def probe_inputs():
        return [(torch.tensor(n),) for n in (0, 3, 8)]

    def forward(self, n):
        rows = self.table[: int(n)]  # expect: EL101, fix exports
        return rows.sum(0)
