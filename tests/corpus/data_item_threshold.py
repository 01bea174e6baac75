"""A confidence threshold read with `.item()` and compared to a module attribute.

From: user reports of routing/early-exit heads that fail `torch.export` on `.item()`.
Expect: the marked line; the preferred fix is written with `self.threshold` and exports.
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 3)
        self.threshold = 0.9

    @staticmethod
    def example_inputs():
        return (torch.zeros(2, 8),)

    def forward(self, x):
        logits = self.head(x)
        probs = logits.softmax(-1)
        conf = probs.max().item()
        if conf > self.threshold:  # expect: EL101, fix exports
            return logits
        return logits * 0.5
