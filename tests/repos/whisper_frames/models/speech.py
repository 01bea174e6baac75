"""A Whisper encoder over log-mel frames of any length (the encoder checks the length)."""

from torch import nn
from transformers import WhisperConfig
from transformers.models.whisper.modeling_whisper import WhisperEncoder


class Listener(nn.Module):
    def __init__(self, config: WhisperConfig):
        super().__init__()
        self.encoder = WhisperEncoder(config)

    def forward(self, input_features):
        return self.encoder(input_features).last_hidden_state
