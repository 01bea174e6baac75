"""`if not ...: raise` on a tensor's values, to stop on a non-finite state.

From: rtqichen/torchdiffeq#269 (its data-dependent checks rewritten so F5-TTS exports).
Expect: the marked line; the preferred fix exports.
Remedy: `torch._assert_async(torch.isfinite(y).all(), "...")`: the same check, kept in the
exported program.
Probes: ordinary states (finite); the check is never meant to fire on valid inputs.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(3, 4), torch.tensor(0.1))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(3, 4), torch.tensor(0.1)), (torch.randn(3, 4) * 10, torch.tensor(0.5))]

    def forward(self, y, dt):
        y = y + dt * y.tanh()
        if not torch.isfinite(y).all():  # expect: EL101, fix exports
            raise ValueError("the solver reached a non-finite state")
        return y
