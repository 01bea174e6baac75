"""Negative control: images of one hand flipped in place through a boolean mask.

From: pytorch/pytorch#91990 (export does not support boolean tensor indexing:
`images[mask] = images[mask].flip(-1)`).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: masks selecting no image, one, and all.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(4, 6, 6), torch.tensor([1, 0, 1, 0]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(4, 6, 6), torch.tensor(h)) for h in ([0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 1, 1])]

    def forward(self, images, handedness):
        images = images * 1.0
        right = handedness == 1
        images[right] = images[right].flip(-1)
        return images
