import os
import time

from torch import nn

from faults.pid import record

record(__file__)


def sleeper(name: str, own_session: bool) -> None:
    if os.fork() == 0:
        if own_session:
            os.setsid()  # out of the job's process group
        record(__file__, name)
        time.sleep(600)
        os._exit(0)


sleeper("child", own_session=False)
sleeper("escaped", own_session=True)


class Forks(nn.Module):
    def forward(self, x):
        return x * 2
