"""A derived size viewed as three groups and added back against its root's tail, no max declared.

From: user reports of derived dims in dynamic_shapes; torch 2.13 says "... satisfy the generated
guard 3 <= dy - 6 and dy - 6 <= IntInfinity()" over the derived size, run together with its next message.
Expect: the marked line, said of `dy`; the preferred fix declares `dy = 3*_dy` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x, y):
        groups = y.view(3, -1, 4)  # expect: EL201, fix exports
        return x[6:] + groups.sum(0).repeat(3, 1)
