"""A Phi decoder over text and a second stream that must have the same length, declared as
two independent dims (pytorch/pytorch issues on "Constraints violated ... must be equal")."""

from torch import nn
from transformers import PhiConfig, PhiModel


class Fusion(nn.Module):
    def __init__(self, config: PhiConfig):
        super().__init__()
        self.model = PhiModel(config)

    def forward(self, input_ids, side):
        hidden = self.model(input_ids).last_hidden_state
        return hidden + side
