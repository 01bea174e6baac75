"""An early return when no token is kept, after `torch.nonzero`.

From: torch's draft-export tests (unbacked sizes from nonzero) and user reports.
Expect: the marked line; the preferred fix exports.
Before torch 2.13: EL101 on line 20, its fix does not export, as in the torch.cond, torch's own kernels still guard on the unbacked count (checked 2.9.1, 2.10.0, 2.11.0, 2.12.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([0.2, 0.9, 0.7, 0.1]),)

    def forward(self, scores):
        scores = scores.float()
        keep = torch.nonzero(scores > 0.5).squeeze(-1)
        if keep.shape[0] == 0:  # expect: EL101, fix exports
            return scores.new_zeros(1)
        return scores[keep]
