"""Negative control: a TTS length regulator: frames repeated by predicted durations, then a convolution.

From: OHF-Voice/piper1-gpl#148 (exporting a VITS voice fails with
GuardOnDataDependentSymNode on the frame count made by durations).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: durations [1, 2, 3] and [4, 0, 1].
Before torch 2.10: clean, as plain torch.export of it succeeds (checked 2.9.1).
Before torch 2.12: EL101 on line 31, as torch's own guard on the unbacked frame count (checked 2.10.0, 2.11.0; 2.9.1 exports it).
"""

import torch
from torch import nn


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.post = nn.Conv1d(8, 8, 3, padding=1)

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 8, 3), torch.tensor([1, 2, 3]))

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 8, 3), torch.tensor([1, 2, 3])), (torch.randn(1, 8, 3), torch.tensor([4, 0, 1]))]

    def forward(self, phonemes, durations):
        phonemes = phonemes * 1.0
        frames = phonemes.repeat_interleave(durations, dim=2)
        return self.post(frames)
