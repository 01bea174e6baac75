from torch import nn

from faults.pid import record

record(__file__)


class Loop(nn.Module):
    def forward(self, x):
        while True:
            pass
