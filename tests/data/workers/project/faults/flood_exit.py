import sys

from torch import nn

from faults.pid import record

record(__file__)


class FloodExit(nn.Module):
    def forward(self, x):
        chunk = ("x" * 99 + "\n") * 10_000
        for _ in range(10):  # 10 MB: far more than a pipe holds, still being read when its end is said
            sys.stdout.write(chunk)
        print("flood over")
        sys.exit(4)
