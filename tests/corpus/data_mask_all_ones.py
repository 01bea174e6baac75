"""An attention mask dropped when it is all ones, as a fast path.

From: huggingface/transformers#46148 (Qwen3Next's `attention_mask is not None and
torch.all(attention_mask == 1)` fails torch.export with `Eq(u0, 1)`).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: always apply the mask; multiplying by a mask of ones is the identity.
Probes: a mask of all ones and one with padding (zeros at the end).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 5, 4), torch.ones(2, 5))

    @staticmethod
    def probe_inputs():
        padded = torch.ones(2, 5)
        padded[1, 3:] = 0
        return [(torch.randn(2, 5, 4), torch.ones(2, 5)), (torch.randn(2, 5, 4), padded)]

    def forward(self, x, mask):
        x = x * 2.0
        if torch.all(mask == 1):  # expect: EL101, fix exports
            mask = None
        if mask is not None:
            x = x * mask[..., None]
        return x.cumsum(1)
