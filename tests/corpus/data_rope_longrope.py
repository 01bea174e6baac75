"""Rotary frequencies switched by the largest position id, as long-context RoPE does.

From: pytorch/pytorch#163791 (Phi-3.5's `if seq_len > original_max_position_embeddings`,
with `seq_len` computed from `position_ids`, fails torch.export).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: `inv = torch.where(seq_len > self.original_max, self.long_inv,
self.short_inv)` picks the same table on every input.
Probes: positions 0..5 (short table) and 30..35 (past the original 16, long table).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.original_max = 16
        self.register_buffer("short_inv", 1.0 / 100 ** (torch.arange(4) / 4))
        self.register_buffer("long_inv", 1.0 / 400 ** (torch.arange(4) / 4))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 6, 8), torch.arange(6)[None])

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 6, 8), torch.arange(6)[None]), (torch.randn(1, 6, 8), torch.arange(30, 36)[None])]

    def forward(self, x, position_ids):
        seq_len = position_ids.max() + 1
        if seq_len > self.original_max:  # expect: EL101, fix exports
            inv = self.long_inv
        else:
            inv = self.short_inv
        freqs = position_ids[..., None].float() * inv
        emb = torch.cat([freqs, freqs], dim=-1)
        rotated = torch.cat([-x[..., 4:], x[..., :4]], dim=-1)
        return x * emb.cos() + rotated * emb.sin()
