import os
import sys

from torch import nn

from faults.pid import record

record(__file__)


class Flood(nn.Module):
    def forward(self, x):
        chunk = ("x" * 99 + "\n") * 10_000
        for _ in range(100):  # 100 MB
            sys.stdout.write(chunk)
        print("after the flood")
        os._exit(5)
