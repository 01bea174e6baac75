"""An OPT decoder, the model family of many serving tutorials."""

from torch import nn
from transformers import OPTConfig, OPTModel


class Generator(nn.Module):
    def __init__(self, config: OPTConfig):
        super().__init__()
        self.model = OPTModel(config)

    def forward(self, input_ids):
        return self.model(input_ids).last_hidden_state
