"""One job's child as the warm parent sees it (torch side): its pipes, what it wrote, and
how its job ended, told to the owner as a Done."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .protocol import Died, Done, Encoded, Lines, OutOfMemory

OUTPUT_TAIL = 64 * 1024  # bytes of the user's output (and of what else it writes on its result pipe) kept per job


@dataclass
class Child:
    pid: int
    out: int | None  # read end of the child's stdout and stderr; None once closed (at its end of file)
    res: int | None  # read end of its result (and of faulthandler's report); None once closed
    req: int | None = None  # write end of a primed child's request pipe
    job: str | None = None  # None while priming or primed
    primed: bool = False
    retired: bool = False  # killed while waiting (forked before a preload): never given a job
    output: bytearray = field(default_factory=bytearray)
    result: Lines = field(default_factory=Lines)  # its result pipe, cut in lines of at most RESULT_MAX
    other: bytearray = field(default_factory=bytearray)  # the tail of its other lines there (faulthandler's)
    end: Encoded | None = None  # its End, once a whole line of it came
    memory_limit: int | None = None  # what its process tree may hold of its own
    over_limit: bool = False  # killed for holding more

    def done(self, status: int | None) -> Done:
        """Its job's Done: the End it wrote, else why there is none (``status``: how it exited, if it did)."""
        assert self.job is not None
        end: Encoded | OutOfMemory | Died | None = self.end
        fault = bytes(self.other + self.result.pending[-OUTPUT_TAIL:])[-OUTPUT_TAIL:].decode("utf-8", "replace")
        if self.over_limit:
            end = OutOfMemory()
        elif self.result.overlong:
            end = Died(overlong=True)
        elif end is None:
            exit_status, killed_by = (
                os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None,
                os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None,
            )
            end = Died(exit_status, killed_by)
        return Done(self.job, end, self.output.decode("utf-8", "replace"), fault.strip())
