"""A sequence and the same sequence two shorter (its deltas), the shorter one read in pairs.

From: user reports of derived dims in dynamic_shapes (`Dim("n")` and `n - 2` for one model);
torch 2.13 names the derived size alone ("Not all values of n - 2 = L['y'].size()[0] ...") and
suggests only a new root `_n` with no relation to `n`.
Expect: the marked line, said of `n` (`n % 2 == 0`); the preferred fix declares `n = 2*_n` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        pairs = y.reshape(-1, 2, 4)  # expect: EL201, fix exports
        return pairs.sum(1).sum(0) + x.sum(0)
