import torch
from torch import nn

from faults.pid import record

record(__file__)


class Fine(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2
