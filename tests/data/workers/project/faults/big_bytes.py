from torch import nn

from faults.pid import record

record(__file__)


class BigBytes(nn.Module):
    def forward(self, x):
        buffer = bytearray(4 << 30)  # plain Python memory, past the 1 GiB cap
        return x * len(buffer)
