import torch


class Core(torch.nn.Module):
    def forward(self, x, *, scale: float = 1.0):
        return x * scale
