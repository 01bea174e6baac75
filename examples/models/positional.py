"""Learned absolute positions: only defined up to max_len tokens."""

import torch
from torch import nn


class LearnedPositions(nn.Module):
    def __init__(self, max_len: int = 128, hidden: int = 16):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Parameter(torch.zeros(max_len, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[1]
        if seq > self.max_len:
            raise ValueError(f"sequence of {seq} is longer than {self.max_len}")
        return x + self.table[:seq]
