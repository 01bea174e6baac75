"""A state-space layer that takes the one-step update when the cache position is past 0.

From: huggingface/transformers#31247 (Mamba's `if cache_params is not None and
cache_position[0] > 0:` switching between the decode step and the full scan).
Expect: the marked line; the preferred fix exports.
Remedy: `torch.cond(cache_position[0] > 0, step, scan, (x, state))`: both branches return a
tensor of the same shape, so both stay in the program.
Probes: cache position 0 (prefill) and 5 (decode).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.decay = nn.Parameter(torch.full((8,), 0.9))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 4, 8), torch.randn(1, 8), torch.tensor([3]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 4, 8), torch.randn(1, 8), torch.tensor([p])) for p in (0, 5)]

    def forward(self, x, state, cache_position):
        x = x * 1.0
        if cache_position[0] > 0:  # expect: EL101, fix exports
            out = state[:, None] * self.decay + x
        else:
            out = x.cumsum(1) * self.decay
        return out
