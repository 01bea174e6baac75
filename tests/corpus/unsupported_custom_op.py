"""A custom op registered without a fake (meta) kernel.

From: torch's custom-op tests and the export docs on `register_fake`.
Expect: the marked line (the call into the op).
"""

import torch
from torch import nn


@torch.library.custom_op("corpus::clamp_rows", mutates_args=())
def clamp_rows(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(max=1.0)


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 4),)

    def forward(self, x):
        x = x.abs()
        y = x + 1
        z = clamp_rows(y)  # expect: EL302
        return z * 2
