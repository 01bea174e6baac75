"""An output size for `interpolate` computed with `int()` of a scaled dynamic size.

From: pytorch/pytorch#147261 (`interpolate` with a fractional scale under dynamic shapes; the
workaround there computes the output size from the input's shape).
Expect: the marked line: `int()` of a float made from `length` fixes `length` to the example's.
Remedy: integer arithmetic on the size (`x.shape[2] * 3 // 2`), which stays symbolic.
Probes: `length` 8, 33 and 128.
"""

import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 4, 40),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {2: Dim("length", min=8, max=256)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 4, n),) for n in (8, 33, 128)]

    def forward(self, x):
        x = x * 1.0
        size = int(x.shape[2] * 1.5)  # expect: EL204
        return F.interpolate(x, size=size, mode="linear")
