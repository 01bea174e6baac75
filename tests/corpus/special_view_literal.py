"""A batch size hard-coded in `view` while the spec declares batch dynamic.

From: user reports (a classifier head written with the training batch size).
Expect: the marked line; the preferred fix is the code edit and exports.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    @staticmethod
    def example_inputs():
        return (torch.randn(4, 8),)

    @staticmethod
    def dynamic_shapes():
        return {"feats": {0: Dim("batch", max=64)}}

    def forward(self, feats):
        feats = self.proj(feats)
        feats = feats.relu()
        return feats.view(4, -1)  # expect: EL204, fix exports
