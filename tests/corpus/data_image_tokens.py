"""Image features scattered into the text embeddings after a count check with `.item()`.

From: pytorch/pytorch#147096 (PaliGemma2 fails torch.export on a data-dependent guard
`Ne(u0, ...)` comparing image tokens with image features).
Expect: the marked line; the preferred fix exports.
Remedy: `torch._check(n == feats.shape[0])`: a true invariant (the processor inserts one
image token per feature); the eager check is then kept as a runtime assertion.
Probes: ids with the 3 image tokens first, last, and spread out.
"""

import torch
from torch import nn

IMAGE = 7


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)

    @staticmethod
    def example_inputs():
        return (torch.tensor([[7, 7, 7, 1, 2, 3]]), torch.randn(3, 8))

    @staticmethod
    def probe_inputs():
        ids = ([[7, 7, 7, 1, 2, 3]], [[1, 2, 3, 7, 7, 7]], [[7, 1, 7, 2, 7, 3]])
        return [(torch.tensor(i), torch.randn(3, 8)) for i in ids]

    def forward(self, ids, feats):
        h = self.embed(ids)
        n = (ids == IMAGE).sum().item()
        if n != feats.shape[0]:  # expect: EL101, fix exports
            raise ValueError(f"image features and image tokens do not match: {n} tokens")
        mask = (ids == IMAGE)[..., None].expand_as(h)
        return h.masked_scatter(mask, feats)
