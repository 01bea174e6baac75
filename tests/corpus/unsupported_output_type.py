"""forward returns an object export cannot flatten.

From: torch's export tests (`test_export_output_type`), user reports.
Expect: the marked line (the return).
"""

import torch
from torch import nn


class Result:
    def __init__(self, value, total):
        self.value = value
        self.total = total


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        x = x.relu()
        y = x * 2
        return Result(y, y.sum())  # expect: EL304
