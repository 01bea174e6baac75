"""A key/value cache of fixed length sliced by the new tokens' count.

From: user reports (KV caches with `max_cache_len` below the declared sequence range).
Expect: the marked line (the slice needs `seq <= 32` to know its size); the preferred fix lowers `seq`'s max and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 32, 8))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 6, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("seq", min=2, max=512)}}

    def forward(self, x):
        x = x * 1.0
        n = x.shape[1]
        past = self.cache[:, :n]  # expect: EL201, fix exports
        return torch.cat([past, x], dim=-1)
