"""A small transformer encoder: exports with dynamic batch and sequence length."""

import torch
from torch import nn


class TinyEncoder(nn.Module):
    def __init__(self, vocab: int = 1000, hidden: int = 32, heads: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        a, _ = self.attn(h, h, h, need_weights=False)
        h = self.norm(h + a)
        h = h + self.ffn(h)
        pooled = h.mean(dim=1)
        return pooled
