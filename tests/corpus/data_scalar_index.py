"""A table row picked by a 0-d integer tensor, then used to slice.

From: pytorch/pytorch#182345 (`torch.export` fails when indexing with a scalar tensor).
Expect: the marked line (the slice's end is read from the tensor's value).
Remedy: `torch.narrow`/`index_select` with the tensor, or `.item()` with a
`torch._check(0 <= n <= 8)`: a true invariant (the table has 8 rows).
Probes: `n` 0, 3 and 8.
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
        rows = self.table[: int(n)]  # expect: EL101
        return rows.sum(0)
