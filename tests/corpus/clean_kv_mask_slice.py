"""Negative control: keys and mask sliced by the last cache position read with `.item()`.

From: huggingface/transformers#39142 (`past_seen_tokens = cache_position[-1]` was not
compatible with torch.export; torch 2.13 exports this slicing as written).
Expect: clean.
Probes: cache positions 0..3 (prefill) and 12..15 (the cache's end).
Before torch 2.10: EL101 on line 29, as torch's slicing guards on the sign of the end read from the mask (checked 2.9.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.randn(16, 8))

    @staticmethod
    def example_inputs():
        return (torch.randn(4, 8), torch.arange(3, 7))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(4, 8), torch.arange(0, 4)), (torch.randn(4, 8), torch.arange(12, 16))]

    def forward(self, q, cache_position):
        seen = cache_position[-1].item() + 1
        keys = self.k_cache[:seen]
        mask = torch.arange(seen)[None] <= cache_position[:, None]
        return (q @ keys.T).masked_fill(~mask, -1e4).softmax(-1)
