"""Negative control: feature levels of a flattened multi-scale map, cut by their sizes read with `.tolist()`.

From: huggingface/transformers#34393 (Mask2Former's `spatial_shapes` tensor broke
torch.export; fixed by also passing the shapes as a Python list).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: shapes [[4, 4], [2, 2]] with 20 rows and [[2, 4], [3, 4]] with 20 rows.
Before torch 2.10: EL101 on line 27, as torch's view guards on the sign of the sizes read by tolist() (checked 2.9.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 20, 8), torch.tensor([[4, 4], [2, 2]]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 20, 8), torch.tensor([[4, 4], [2, 2]])), (torch.randn(1, 20, 8), torch.tensor([[2, 4], [3, 4]]))]

    def forward(self, feats, shapes):
        feats = feats * 1.0
        start, pooled = 0, []
        for h, w in shapes.tolist():
            level = feats[:, start : start + h * w]
            grid = level.transpose(1, 2).reshape(feats.shape[0], feats.shape[2], h, w)
            pooled.append(grid.mean((2, 3)))
            start += h * w
        return torch.stack(pooled, 1)
