"""`torch._assert` on a tensor condition inside forward.

From: pytorch/pytorch#186306 (fixing pytorch/pytorch#134533: a tensor-valued
`torch._assert` becomes a data-dependent guard under export).
Expect: the marked line; the preferred fix exports.
Remedy: `torch._assert_async(cond, msg)`: the same check, kept in the exported program.
Probes: logits of size 1 and of size 100 (both pass the check).
Fixed in torch: 2.15 (a tensor-valued `torch._assert` exports there, checked when the program
runs: a negative control from then on).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 8),)

    @staticmethod
    def probe_inputs():
        return [(torch.randn(2, 8),), (torch.randn(2, 8) * 100,)]

    def forward(self, logits):
        probs = logits.softmax(-1)
        torch._assert((logits.abs() < 1e4).all(), "logits overflow")  # expect: EL101, fix exports
        return probs
