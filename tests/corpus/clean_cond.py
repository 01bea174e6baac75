"""Negative control: the data-dependent branch written with `torch.cond`.

From: torch's ExportDB (`cond_branch_class_method`).
Expect: clean.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4),)

    def forward(self, x):
        x = x * 2
        return torch.cond(x.sum() > 0, lambda v: v.cos(), lambda v: v.sin(), (x,))
