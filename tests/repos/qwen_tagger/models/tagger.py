"""A Qwen2 token tagger that drops padding rows by their values before the head (the
pattern of huggingface/transformers issues on boolean-mask indexing in export)."""

import torch
from torch import nn
from transformers import Qwen2Config, Qwen2Model


class Tagger(nn.Module):
    def __init__(self, config: Qwen2Config, tags: int = 5):
        super().__init__()
        self.model = Qwen2Model(config)
        self.head = nn.Linear(config.hidden_size, tags)

    def forward(self, input_ids, attention_mask):
        hidden = self.model(input_ids, attention_mask=attention_mask).last_hidden_state
        kept = hidden[attention_mask.bool()]
        if kept.shape[0] == 0:
            return torch.zeros(0, self.head.out_features)
        return self.head(kept)
