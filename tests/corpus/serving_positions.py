"""A position embedding indexed by `arange(seq)`, with `seq` declared past its table.

From: issue reports of GPT-2 style models exported with a longer `seq` than `n_positions`.
Expect: torch cannot see it; exportlens runs the program at `seq`'s max (the marked line of pyproject.toml),\nand the preferred fix lowers the max and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(50, 8)
        self.pos = nn.Embedding(64, 8)

    def forward(self, ids):
        ids = ids.long()
        h = self.tok(ids)
        pos = torch.arange(ids.shape[1])
        return h + self.pos(pos)
