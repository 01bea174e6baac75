"""A Python dict looked up by a dynamic size, to pick how many learned queries to use.

From: huggingface/transformers#48907 (Aria's projector indexes a dict by the patch count;
under dynamic shapes that count is a SymInt: `TypeError: unhashable type`).
Expect: the marked line: it raises only while exporting.
Remedy: a spec change (export each patch count it serves, `patches` static), or look the
count up in a tensor.
Probes: 16 and 64 patches.
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.queries_for = {16: 4, 64: 8}
        self.queries = nn.Parameter(torch.randn(8, 32))

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 16, 32),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {1: Dim("patches", min=16, max=64)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 16, 32),), (torch.randn(1, 64, 32),)]

    def forward(self, x):
        x = x * 1.0
        n = self.queries_for[x.shape[1]]  # expect: EL305, fix exports
        attn = (self.queries[:n] @ x.transpose(1, 2)).softmax(-1)
        return attn @ x
