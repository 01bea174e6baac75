"""Class counts from `bincount`, divided by a prior of eight classes.

From: pytorch/pytorch#147094 (`torch.bincount` in a model fails torch.export).
Expect: the marked line: torch 2.13 exports it by assuming the counts have exactly eight
bins (a runtime assertion made by this division), so the exported program rejects ids that
are all 0, which eager takes (one bin, broadcast over the eight).
Remedy: `torch.bincount(ids, minlength=8)`, which says there are eight classes (checked:
it exports and agrees with eager on the ids covering every class and on all sevens; on all
zeros eager spreads its single bin over the eight by broadcasting, a bug the rewrite does not keep).
Probes: ids covering every class, all zeros, and all sevens.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("prior", torch.full((8,), 0.125))

    @staticmethod
    def example_inputs():
        return (torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 3]),)

    @staticmethod
    def probe_inputs():
        return [(torch.arange(9) % 8,), (torch.zeros(9, dtype=torch.long),), (torch.full((9,), 7),)]

    def forward(self, ids):
        ids = ids.long()
        counts = torch.bincount(ids)
        return counts.float() / self.prior  # expect: EL206
