"""An audio encoder that refuses any number of mel frames but the one it was trained on.

From: huggingface/optimum-executorch#45 (Whisper is exported with static shapes: its encoder
checks the input length, so a dynamic frame count cannot be declared).
Expect: the marked line: the check fixes `frames` to 64; the preferred fix makes `frames`
static and exports.
Remedy: a spec change: `frames` static at 64, which is what the model accepts.
Probes: 64 frames (the only length eager accepts).
"""

import torch
from torch import nn
from torch.export import Dim


class Case(nn.Module):
    def __init__(self):
        super().__init__()
        self.frames = 64
        self.conv = nn.Conv1d(8, 16, 3, padding=1)

    @staticmethod
    def example_inputs():
        return (torch.randn(1, 8, 64),)

    @staticmethod
    def dynamic_shapes():
        return {"mel": {2: Dim("frames", min=8, max=256)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 8, 64),), (torch.randn(2, 8, 64),)]

    def forward(self, mel):
        mel = mel * 1.0
        if mel.shape[-1] != self.frames:  # expect: EL204, fix exports
            raise ValueError(f"expected {self.frames} mel frames, got {mel.shape[-1]}")
        return nn.functional.gelu(self.conv(mel))
