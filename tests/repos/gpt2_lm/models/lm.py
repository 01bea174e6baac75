"""A GPT-2 language model head built from its config, as a training script builds it."""

from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel


class LanguageModel(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.lm = GPT2LMHeadModel(config)

    def forward(self, input_ids):
        return self.lm(input_ids).logits
