"""Relative-position offsets built by a helper memoized with `functools.lru_cache` on the length.

From: pytorch/pytorch#104797 (a library caches on the sizes it is given, which hashes them,
and a traced size cannot be hashed: `unhashable type: 'SymInt'`); pytorch/pytorch#102161.
Expect: the marked line: while exporting, `seq` reaches the cache as a symbolic size, and
hashing it raises TypeError; eager runs.
Remedy: take `@functools.lru_cache` off `offsets`: the exported program runs the body once
per call whatever the cache, so the program keeps its meaning.
Probes: `seq` 2, 9 and 40.
"""

import functools

import torch
from torch import nn
from torch.export import Dim


@functools.lru_cache(maxsize=16)
def offsets(length):
    steps = torch.arange(length)
    return (steps[None, :] - steps[:, None]).clamp(-8, 8) + 8


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Embedding(17, 1)

    @staticmethod
    def example_inputs():
        return (torch.randn(9, 9),)

    @staticmethod
    def dynamic_shapes():
        seq = Dim("seq", min=2, max=128)
        return {"scores": {0: seq, 1: seq}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(2, 2),), (torch.randn(9, 9),), (torch.randn(40, 40),)]

    def forward(self, scores):
        rel = offsets(scores.shape[0])  # expect: EL305, fix exports
        return (scores + self.bias(rel).squeeze(-1)).softmax(-1)
