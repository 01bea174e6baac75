"""A decoder block with a KV cache, as in Llama: the cache is written at start_pos."""

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


class DecoderBlock(nn.Module):
    def __init__(self, dim: int = 64, n_heads: int = 4, max_batch_size: int = 4, max_seq_len: int = 32):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.norm = nn.LayerNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.mlp = FeedForward(dim, 4 * dim)
        cache = (max_batch_size, max_seq_len, n_heads, dim // n_heads)
        self.register_buffer("cache_k", torch.zeros(cache), persistent=False)
        self.register_buffer("cache_v", torch.zeros(cache), persistent=False)

    def forward(self, x, start_pos: int):
        b, t, d = x.shape
        h = self.norm(x)
        q = self.wq(h).view(b, t, self.n_heads, self.head_dim)
        k = self.wk(h).view(b, t, self.n_heads, self.head_dim)
        v = self.wv(h).view(b, t, self.n_heads, self.head_dim)
        self.cache_k[:b, start_pos : start_pos + t] = k
        self.cache_v[:b, start_pos : start_pos + t] = v
        keys = self.cache_k[:b, : start_pos + t].transpose(1, 2)
        values = self.cache_v[:b, : start_pos + t].transpose(1, 2)
        att = F.scaled_dot_product_attention(q.transpose(1, 2), keys, values)
        x = x + self.wo(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(x)
