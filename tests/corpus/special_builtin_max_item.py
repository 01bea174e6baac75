"""Frames cut to the longest sequence, read as `int(max(lengths).item())`.

From: pytorch/pytorch#113002 (the longest length read from a tensor as a size; there with
`lengths.max().item()`, here with Python's own `max` over the tensor, as users write it).
Expect: the marked line: torch.export traces the builtin `max` over the tensor's elements
as `torch.maximum` of one argument, which raises TypeError; eager runs.
Remedy: `lengths.max()` for `max(lengths)`, then `torch.sym_int(...)` for the `int(...)` of
the value read: the same number, kept symbolic (no `torch._check` needed on torch 2.13: the
slice is bounded by the frames' own size). `exportlens check` offers both edits as one
preferred fix (proven after the second); one process, without the workers' convergence,
offers the first alone, so no `fix exports` here.
Probes: lengths [7, 3, 5] (the longest inside the frames) and [2, 2, 1].
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 12, 4), torch.tensor([7, 3, 5]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(3, 12, 4), torch.tensor([7, 3, 5])), (torch.randn(3, 12, 4), torch.tensor([2, 2, 1]))]

    def forward(self, frames, lengths):
        longest = int(max(lengths).item())  # expect: EL305
        kept = frames[:, :longest]
        steps = torch.arange(kept.shape[1])
        return kept * (steps[None, :] < lengths[:, None]).unsqueeze(-1)
