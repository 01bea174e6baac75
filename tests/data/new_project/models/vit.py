"""A small ViT that interpolates its position embeddings to the image's size."""

import torch
import torch.nn.functional as F
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, in_chans: int, dim: int, patch: int):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, img_size: int = 32, patch: int = 8, in_chans: int = 3, dim: int = 32, depth: int = 2, classes: int = 10):
        super().__init__()
        self.patch = patch
        self.grid = img_size // patch
        self.patch_embed = PatchEmbed(in_chans, dim, patch)
        self.pos_embed = nn.Parameter(torch.randn(1, self.grid * self.grid, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, classes)

    def interpolate_pos(self, h: int, w: int):
        if h == self.grid and w == self.grid:
            return self.pos_embed
        pos = self.pos_embed.reshape(1, self.grid, self.grid, -1).permute(0, 3, 1, 2)
        pos = F.interpolate(pos, size=(h, w), mode="bicubic", align_corners=False)
        return pos.permute(0, 2, 3, 1).flatten(1, 2)

    def forward(self, pixel_values):
        B, C, H, W = pixel_values.shape
        x = self.patch_embed(pixel_values)
        x = x + self.interpolate_pos(H // self.patch, W // self.patch)
        x = self.blocks(x)
        return self.head(x.mean(1))
