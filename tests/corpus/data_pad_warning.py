"""A warning in forward when padded ids come without an attention mask.

From: huggingface/transformers#16136 (a warning that checks whether `input_ids` holds the
pad token when no `attention_mask` is given, a check on the ids' values inside forward).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: move the check out of forward (into the tokenizer or the caller); the
warning changes no output.
Probes: ids with a pad token and ids without one.
"""

import warnings

import torch
from torch import nn

PAD = 0


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 8)

    @staticmethod
    def example_inputs():
        return (torch.tensor([[5, 6, 7, 0, 0]]),)

    @staticmethod
    def probe_inputs():
        return [(torch.tensor([[5, 6, 7, 0, 0]]),), (torch.tensor([[5, 6, 7, 8, 9]]),)]

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None and (input_ids == PAD).any():  # expect: EL101, fix exports
            warnings.warn("padded input_ids without an attention_mask", stacklevel=2)
        return self.embed(input_ids).mean(1)
