"""An input concatenated with itself and added to one declared apart.

From: torch's dynamic-shapes tests (`2*dx` relations).
Expect: the marked line; the preferred fix ties `m` to `n` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        x = x.relu()
        xx = torch.cat([x, x])
        return xx + y  # expect: EL203, fix exports
