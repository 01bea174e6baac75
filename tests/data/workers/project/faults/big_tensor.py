import torch
from torch import nn

from faults.pid import record

record(__file__)


class BigTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.zeros(1024, 1024, 1024)  # 4 GiB of float32, past the 1 GiB cap

    def forward(self, x):
        return x * 2
