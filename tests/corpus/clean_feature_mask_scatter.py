"""Negative control: a frame mask built by marking each sequence's last frame, then a reversed cumulative sum.

From: huggingface/transformers#46738 (SEW's scatter + cumsum mask replaced by an `arange`
comparison for torch.export, which had baked the length in as a constant).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: `frames` 5, 12 and 40 with lengths at and below it.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 12, 4), torch.tensor([12, 7]))

    @staticmethod
    def dynamic_shapes():
        return {"hidden": {1: Dim("frames", min=2, max=512)}, "lengths": None}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(2, n, 4), torch.tensor([n, max(1, n - 3)])) for n in (5, 12, 40)]

    def forward(self, hidden, lengths):
        b, frames, _ = hidden.shape
        mask = torch.zeros(b, frames, dtype=hidden.dtype)
        mask[torch.arange(b), lengths - 1] = 1
        mask = mask.flip([-1]).cumsum(-1).flip([-1]).bool()
        return hidden * mask[..., None]
