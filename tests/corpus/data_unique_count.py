"""A branch on how many distinct values a tensor holds.

From: torch's draft-export tests (data-dependent output sizes from `unique`).
Expect: the marked line.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([1, 2, 2, 3, 3, 3]),)

    def forward(self, ids):
        ids = ids.long()
        u = torch.unique(ids)
        if u.shape[0] > 4:  # expect: EL101
            return u[:4]
        return u
