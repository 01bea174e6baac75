"""torch's own output kept off the user's terminal while exporting (torch side)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from .compat.internals import silenced_trace_print


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Keep torch's own output off the user's terminal: its loggers (draft export's report,
    dynamo's warnings) and the partial graph a failing export prints. What matters of it
    reaches the user as findings. The user's own prints are left alone (a worker captures them)."""
    loggers = [logging.getLogger(n) for n in ("torch", "torch.export", "torch._dynamo", "torch.fx")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with silenced_trace_print():  # the partial graph a failing export prints
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
