import os
import signal
import time

from torch import nn

from faults.pid import record

record(__file__)


class KillParent(nn.Module):
    def forward(self, x):
        time.sleep(0.5)  # a neighbour is running by now
        os.kill(os.getppid(), signal.SIGKILL)  # the warm parent, and with it every job it runs
        return x
