"""A Gemma encoder pooled into a fixed 16 slots by a reshape written for one sequence length."""

from torch import nn
from transformers import GemmaConfig, GemmaModel


class SlotPool(nn.Module):
    def __init__(self, config: GemmaConfig):
        super().__init__()
        self.model = GemmaModel(config)

    def forward(self, input_ids):
        hidden = self.model(input_ids).last_hidden_state
        return hidden.reshape(hidden.shape[0], 16, -1)
