import sys

# what the warm worker imported before this job's child was forked
BEFORE = "hypothesis" in sys.modules

import hypothesis  # noqa: E402,F401  (third-party: the worker imports it once, for every later child)
import torch  # noqa: E402
from torch import nn  # noqa: E402

from faults.pid import record  # noqa: E402  (the project's own: never imported by the worker)

record(__file__)


class Preloaded(nn.Module):
    def forward(self, x):
        if not BEFORE:
            raise RuntimeError("hypothesis was imported by this job's child, not by the warm worker")
        return torch.relu(x) * 2
