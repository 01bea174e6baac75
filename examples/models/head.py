"""A classifier head written in a notebook with batch size 4."""

import torch
from torch import nn


class ClassifierHead(nn.Module):
    def __init__(self, hidden: int = 16, classes: int = 10):
        super().__init__()
        self.classes = classes
        self.proj = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.proj(x)
        flat = logits.view(4, self.classes)
        return flat.softmax(dim=-1)
