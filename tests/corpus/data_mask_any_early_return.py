"""A padding mask applied only where some position is padded: `if not pad.any(): return x`.

From: huggingface/transformers#48928 (skipping the mask's work when nothing is padded puts a
data-dependent test on the export path; the maintainers asked for no such test there).
Expect: the marked line: `if` needs `not pad.any()` as a Python bool, which is only known
when the model runs.
Remedy: drop the early return: with no position padded, `masked_fill` changes nothing and
the code after it gives `x` as it is, so the program keeps the module's meaning. The
proof prefers it (`exportlens check`); one process, unproven, offers torch.cond first,
which does not export here, so no `fix exports`.
Probes: a mask with padded positions, and one with none (the early return's side).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)

    @staticmethod
    def example_inputs():
        pad = torch.zeros(2, 5, dtype=torch.bool)
        pad[0, 3:] = True
        return (torch.randn(2, 5, 8), pad)

    @staticmethod
    def probe_inputs():
        some = torch.zeros(2, 5, dtype=torch.bool)
        some[1, 4:] = True
        return [(torch.randn(2, 5, 8), some), (torch.randn(2, 5, 8), torch.zeros(2, 5, dtype=torch.bool))]

    def forward(self, x, pad):
        x = self.norm(x)
        if not pad.any():  # expect: EL101
            return x
        return x.masked_fill(pad[..., None], 0.0)
