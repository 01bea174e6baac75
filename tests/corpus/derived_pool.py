"""An average pool, then a reshape that hard-codes the pooled length.

From: the issue's third row (a reshape that forces `h == 64`).
Expect: the marked line: a specialization of `h`.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(2)

    def forward(self, x):
        x = x * 1.0
        z = self.pool(x)
        return z.reshape(z.shape[0], 3, 64)  # expect: EL204
