"""A graph break under strict export: a call Dynamo cannot trace.

From: torch's strict-mode export tests (`strict=True` graph breaks).
Expect: the marked line.
"""

import torch
from torch import nn
import time


class Case(nn.Module):
    def forward(self, x):
        x = x * 2
        y = x.relu()
        stamp = time.perf_counter_ns()  # expect: EL301
        return y + (stamp % 2)
