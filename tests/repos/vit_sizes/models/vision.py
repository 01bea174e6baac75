"""A ViT classifier asked to take images of any size."""

from torch import nn
from transformers import ViTConfig, ViTModel


class Classifier(nn.Module):
    def __init__(self, config: ViTConfig, labels: int = 10):
        super().__init__()
        self.vit = ViTModel(config)
        self.head = nn.Linear(config.hidden_size, labels)

    def forward(self, pixel_values):
        return self.head(self.vit(pixel_values).pooler_output)
