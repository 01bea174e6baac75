"""A Mistral decoder (sliding-window attention) built from its config."""

from torch import nn
from transformers import MistralConfig, MistralModel


class WindowDecoder(nn.Module):
    def __init__(self, config: MistralConfig):
        super().__init__()
        self.model = MistralModel(config)

    def forward(self, input_ids):
        return self.model(input_ids).last_hidden_state
