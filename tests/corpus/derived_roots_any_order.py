"""Two inputs whose dims are declared independent, the shorter one first, the longer with a min.

From: the issue's roots declared in any order (`dx >= 5`, `dz = dx - 3`); a relation between two
declared dims keeps the one with bounds (`dx`) as the root, whatever order the spec lists them in.
Expect: the marked line; the preferred fix declares `dz = dx - 3` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, z, x):
        x = x + 1
        return x[3:] + z  # expect: EL203, fix exports
