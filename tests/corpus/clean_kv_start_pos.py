"""Negative control: a key cache written at a start position read with `.item()`.

From: pytorch/executorch#1933 (`sp = start_pos.item(); cache_k[sp : sp + seq_len] = xk`
specialized the data-dependent start in 2024; fixed there with `narrow`). torch 2.13
exports the slice assignment as written.
Expect: clean.
Probes: start positions 0, 4 and 29 (the last three slots).
Before torch 2.13: EL101 on line 32, as torch's slicing guards on the start read from the tensor (checked 2.9.1, 2.10.0, 2.11.0, 2.12.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 32, 8))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 3, 8), torch.tensor(4))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 3, 8), torch.tensor(p)) for p in (0, 4, 29)]

    def forward(self, k, start_pos):
        k = k * 1.0
        sp = start_pos.item()
        seq = k.shape[1]
        self.k_cache[:, sp : sp + seq] = k
        return self.k_cache.sum(1)
