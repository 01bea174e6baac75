"""A static key cache of 512 positions written from position 1, with `seq` declared up to 1024.

From: huggingface/transformers#32168 (a static cache registered as buffers so torch.export
can mutate it; the cache length bounds the sequence).
Expect: the marked line: the cache holds 512 positions, so from position 1 `seq` must be
at most 511; the preferred fix lowers `seq`'s max and exports.
Remedy: a spec change: `seq` max 511 (the range the program serves).
Probes: `seq` 2, 64 and 511.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.start = 1
        self.register_buffer("k_cache", torch.zeros(1, 512, 32))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 16, 32),)

    @staticmethod
    def dynamic_shapes():
        return {"k": {1: Dim("seq", min=2, max=1024)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, n, 32),) for n in (2, 64, 511)]

    def forward(self, k):
        k = k * 1.0
        seq = k.shape[1]
        self.k_cache[:, self.start : self.start + seq] = k  # expect: EL201, fix exports
        return self.k_cache[:, : self.start + seq].mean(1)
