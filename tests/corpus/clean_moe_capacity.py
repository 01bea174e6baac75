"""Negative control: an expert capacity read with `.item()` from the busiest expert's load, capped with `min`.

From: pytorch/pytorch#113002 (`lengths.max().item()` used as a size fails export until the
value is bounded).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: routing spread over the experts (load below the capacity) and every token to one
expert (load above it).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.capacity = 3
        self.gate = nn.Linear(8, 4, bias=False)

    @staticmethod
    def example_inputs():
        return (torch.randn(6, 8),)

    @staticmethod
    def probe_inputs():
        return [(torch.randn(6, 8),), (torch.zeros(6, 8),)]

    def forward(self, x):
        chosen = self.gate(x).argmax(-1)
        load = torch.bincount(chosen, minlength=4).max().item()
        cap = min(load, self.capacity)
        slots = x.new_zeros(4, cap, 8)
        return slots.sum(1) + x.mean(0)
