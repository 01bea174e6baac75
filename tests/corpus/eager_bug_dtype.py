"""Float ids fed to an embedding: the spec's dtype is wrong, eager fails too.

From: user reports (`f32` written for token ids).
Expect: the marked line; a bug in the code or the spec, not an export problem.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids):
        ids = ids * 1
        n = ids.shape[1]
        return self.emb(ids) * n  # expect: EL405
