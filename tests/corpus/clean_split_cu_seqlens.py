"""Negative control: packed sequences cut apart by lengths taken from cumulative offsets with `.tolist()`.

From: microsoft/olive-recipes#492 (a vision encoder's `torch.split(t, lengths.tolist())`
over `cu_seqlens` kept out of the exported path).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: offsets [0, 2, 5, 6] and [0, 6, 6, 6] over 6 rows.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(6, 4), torch.tensor([0, 2, 5, 6]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(6, 4), torch.tensor([0, 2, 5, 6])), (torch.randn(6, 4), torch.tensor([0, 6, 6, 6]))]

    def forward(self, x, cu_seqlens):
        x = x * 1.0
        lengths = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
        parts = x.split(lengths)
        return torch.cat([p.softmax(0) for p in parts])
