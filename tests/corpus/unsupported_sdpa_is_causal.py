"""`is_causal` for attention decided by whether there is more than one query.

From: huggingface/transformers#30311 (with torch.export, SDPA's `is_causal` chosen from the
query length is hard-coded by the example inputs).
Expect: the marked line: `seq > 1` stays symbolic, and attention refuses a symbolic bool for
`is_causal` (a `TypeError` raised only while exporting); `bool()` of it would instead drop
`seq = 1` from the declared range.
Remedy: branch-free: always pass an explicit causal mask; for a single query it allows every
key, as `is_causal=False` does.
Probes: `seq` 1 (a decode step) and 7.
"""

import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 2, 7, 8), torch.randn(1, 2, 7, 8))

    @staticmethod
    def dynamic_shapes():
        seq = Dim("seq", min=1, max=64)
        return {"q": {2: seq}, "kv": {2: seq}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 2, n, 8), torch.randn(1, 2, n, 8)) for n in (1, 7)]

    def forward(self, q, kv):
        q = q * 1.0
        causal = q.shape[2] > 1
        return F.scaled_dot_product_attention(q, kv, kv, is_causal=causal)  # expect: EL305, fix exports
