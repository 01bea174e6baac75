"""A check that the levels' sizes add up to the flattened sequence, before splitting it.

From: huggingface/transformers#34393 (Mask2Former's multi-scale deformable attention fixed for
torch.export, its checks and `spatial_shapes` reworked).
Expect: the marked line; the preferred fix exports.
Remedy: `torch._check(total == value.shape[1])`: a true invariant (the encoder flattened these
very levels), kept as a runtime assertion.
Probes: levels [[4, 4], [2, 2]] and [[2, 6], [2, 4]], 20 rows each.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 20, 8), torch.tensor([[4, 4], [2, 2]]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 20, 8), torch.tensor(s)) for s in ([[4, 4], [2, 2]], [[2, 6], [2, 4]])]

    def forward(self, value, spatial_shapes):
        value = value * 1.0
        total = (spatial_shapes[:, 0] * spatial_shapes[:, 1]).sum().item()
        if total != value.shape[1]:  # expect: EL101, fix exports
            raise ValueError("the spatial shapes do not match the sequence length")
        return value.mean(1)
