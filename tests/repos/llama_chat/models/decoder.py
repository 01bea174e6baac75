"""A Llama decoder with its padding mask, the shape most chat fine-tunes export."""

from torch import nn
from transformers import LlamaConfig, LlamaModel


class ChatDecoder(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.model = LlamaModel(config)

    def forward(self, input_ids, attention_mask=None):
        return self.model(input_ids, attention_mask=attention_mask).last_hidden_state
