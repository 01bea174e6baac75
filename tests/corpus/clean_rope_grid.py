"""Negative control: 2-D rotary position ids for an image whose patch grid is read from a tensor.

From: pytorch/pytorch#158786 (Qwen2-VL's vision rotary embedding: `h = grid[...].item()`,
`torch.arange(h)`, then a reshape by the spatial merge size fails torch.export).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: grids (1, 4, 6), (2, 2, 8) and (1, 8, 2).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([1, 4, 6]),)

    @staticmethod
    def probe_inputs():
        return [(torch.tensor(g),) for g in ([1, 4, 6], [2, 2, 8], [1, 8, 2])]

    def forward(self, grid):
        t, h, w = grid.tolist()
        rows = torch.arange(h).unsqueeze(1).expand(-1, w)
        rows = rows.reshape(h // 2, 2, w // 2, 2)
        return rows.permute(0, 2, 1, 3).flatten().repeat(t)
