"""A Llama in the style of Meta's reference implementation: a key/value cache sized by
``max_batch_size`` and ``max_seq_len``, the new tokens written at ``start_pos``, and the
causal mask widened by a block of zeros for the positions already in the cache."""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 4
    vocab_size: int = 256
    multiple_of: int = 32
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_batch_size: int = 4
    max_seq_len: int = 64


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def rotary_tables(head_dim: int, end: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Each position's rotation of each pair of a head's features, as cosines and sines."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(end).float(), freqs)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``x`` (batch, seq, heads, head_dim) with each pair of features turned by its position's angle."""
    even, odd = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return turned.flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.dim, bias=False)
        self.wk = nn.Linear(args.dim, args.dim, bias=False)
        self.wv = nn.Linear(args.dim, args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)
        shape = (args.max_batch_size, args.max_seq_len, self.n_heads, self.head_dim)
        self.register_buffer("cache_k", torch.zeros(shape), persistent=False)
        self.register_buffer("cache_v", torch.zeros(shape), persistent=False)

    def forward(self, x, start_pos: int, cos, sin, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = rotate(xq, cos, sin), rotate(xk, cos, sin)
        # a copy of the cache per call: a program run twice answers the same
        cache_k, cache_v = self.cache_k.clone(), self.cache_v.clone()
        cache_k[:bsz, start_pos : start_pos + seqlen] = xk
        cache_v[:bsz, start_pos : start_pos + seqlen] = xv
        keys = cache_k[:bsz, : start_pos + seqlen].transpose(1, 2)
        values = cache_v[:bsz, : start_pos + seqlen].transpose(1, 2)
        scores = xq.transpose(1, 2) @ keys.transpose(2, 3) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        out = F.softmax(scores.float(), dim=-1).type_as(xq) @ values
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, dim: int, multiple_of: int):
        super().__init__()
        hidden = int(2 * (4 * dim) / 3)
        hidden = multiple_of * ((hidden + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, args.multiple_of)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, start_pos: int, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), start_pos, cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, params: ModelArgs):
        super().__init__()
        self.params = params
        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.layers = nn.ModuleList(TransformerBlock(params) for _ in range(params.n_layers))
        self.norm = RMSNorm(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
        cos, sin = rotary_tables(params.dim // params.n_heads, params.max_seq_len * 2, params.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, tokens, start_pos: int):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        cos = self.rope_cos[start_pos : start_pos + seqlen]
        sin = self.rope_sin[start_pos : start_pos + seqlen]
        mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = torch.triu(mask, diagonal=1)
        # the new tokens see every cached position: zeros before the causal block
        mask = torch.hstack([torch.zeros((seqlen, start_pos), device=tokens.device), mask]).type_as(h)
        for layer in self.layers:
            h = layer(h, start_pos, cos, sin, mask)
        return self.output(self.norm(h)).float()
