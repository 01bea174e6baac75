import os

from torch import nn

from faults.pid import record

record(__file__)


class HardExit(nn.Module):
    def forward(self, x):
        print("leaving now")
        os._exit(3)
