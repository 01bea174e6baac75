"""Input ids cut to the positions not yet cached, when their lengths differ.

From: huggingface/transformers#36652 (DynamicCache export fixed by rewriting the input
preparation's control flow, `input_ids[:, cache_position]` when the lengths differ).
Expect: the marked line: the branch fixes `seq` and `new` to be equal, though they are
declared apart.
Remedy: branch-free: `ids[:, -cache_position.shape[0]:]` always; it is the identity when the
lengths are equal.
Probes: `seq` 6 with `new` 6, and `seq` 9 with `new` 1.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 8)

    @staticmethod
    def example_inputs():
        return (torch.randint(0, 32, (1, 6)), torch.arange(6))

    @staticmethod
    def dynamic_shapes():
        return {"ids": {1: Dim("seq", max=64)}, "cache_position": {0: Dim("new", max=64)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randint(0, 32, (1, 6)), torch.arange(6)), (torch.randint(0, 32, (1, 9)), torch.tensor([8]))]

    def forward(self, ids, cache_position):
        ids = ids.long()
        if ids.shape[1] != cache_position.shape[0]:  # expect: EL202
            ids = ids[:, -cache_position.shape[0] :]
        return self.embed(ids) + cache_position[None, :, None]
