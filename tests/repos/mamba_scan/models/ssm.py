"""A Mamba state-space language model: its reference path scans the sequence step by step."""

from torch import nn
from transformers import MambaConfig, MambaModel


class Scanner(nn.Module):
    def __init__(self, config: MambaConfig):
        super().__init__()
        self.model = MambaModel(config)

    def forward(self, input_ids):
        return self.model(input_ids).last_hidden_state
