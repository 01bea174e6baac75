"""A RoBERTa encoder whose pooling branches on a value read from the batch (`.item()`)."""

from torch import nn
from transformers import RobertaConfig, RobertaModel


class Router(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.encoder = RobertaModel(config)

    def forward(self, input_ids):
        hidden = self.encoder(input_ids).last_hidden_state
        if hidden.mean().item() > 0:
            return hidden[:, 0]
        return hidden.mean(dim=1)
