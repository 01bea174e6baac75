"""An image halved and doubled again with interpolate, then added to itself.

From: user reports of interpolate/resize in exported U-Nets; the guard `2*trunc(0.5*side) == side`
is not one sympy solves, and the one-size range a scan found once made exportlens fail (EL901).
Expect: the marked line; the preferred fix declares `side = 2*_side` and exports.
"""

import torch.nn.functional as F
from torch import nn


class Case(nn.Module):
    def forward(self, x):
        h = F.interpolate(x, scale_factor=0.5)
        h = F.interpolate(h, scale_factor=2.0)
        return h + x  # expect: EL201, fix exports
