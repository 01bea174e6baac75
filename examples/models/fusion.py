"""Gated fusion of text and image tokens, position by position."""

import torch
from torch import nn



class GatedFusion(nn.Module):
    def __init__(self, hidden: int = 16):
        super().__init__()
        self.gate = nn.Linear(2 * hidden, hidden)

    def forward(self, text: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        both = torch.cat([text, image], dim=-1)
        g = torch.sigmoid(self.gate(both))
        return g * text + (1 - g) * image
