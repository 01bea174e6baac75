"""A Mixtral mixture of experts: tokens routed to experts by their values."""

from torch import nn
from transformers import MixtralConfig, MixtralModel


class ExpertDecoder(nn.Module):
    def __init__(self, config: MixtralConfig):
        super().__init__()
        self.model = MixtralModel(config)

    def forward(self, input_ids):
        return self.model(input_ids).last_hidden_state
