"""A squeeze guarded by `size == 1` on a dim declared from 1.

From: torch's 0/1 specialization tests (`test_export_dynamic_dim_not_1`).
Expect: torch assumes `batch != 1` and exports; at the declared `batch = 1` the program's output is not
eager's, which exportlens finds by running it there (the marked line of pyproject.toml). The
preferred fix raises `batch`'s min and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def forward(self, x):
        x = x.float()
        h = x.tanh()
        if h.shape[0] == 1:
            h = h.squeeze(0)
        return h
