"""A T5 encoder for retrieval embeddings, mean-pooled over the sequence."""

from torch import nn
from transformers import T5Config, T5EncoderModel


class Embedder(nn.Module):
    def __init__(self, config: T5Config):
        super().__init__()
        self.encoder = T5EncoderModel(config)

    def forward(self, input_ids):
        return self.encoder(input_ids).last_hidden_state.mean(dim=1)
