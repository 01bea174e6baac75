"""A KV cache of 512 positions written from `start_pos` on.

From: user reports of KV caches (`self.k_cache[start_pos : start_pos + seq]`) exported with a
sequence range wider than the cache.
Expect: the marked line, naming the cache's 512 rows and `start_pos`; the preferred fix sets `seq`'s max and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(512, 32))

    def forward(self, x, start_pos):
        seq = x.shape[0]
        self.k_cache[start_pos : start_pos + seq] = x  # expect: EL201, fix exports
        return self.k_cache[: start_pos + seq].sum(0)
