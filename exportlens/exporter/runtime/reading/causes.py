"""What an error raised in a job was, read from the exception itself where the job makes
a finding of it (torch side): ``Finding.cause``, which the owner acts on (workers/outcome.py)."""

from __future__ import annotations

import errno

from ...core.causes import Cause
from ..compat.lowering import chain
from ..compat.messages import ALLOCATION_REFUSED


def cause_of(exc: BaseException) -> Cause:
    """``exc``'s cause, from it or an error it was raised from or while handling (a library
    that wraps a refused allocation in its own error still ran out of memory)."""
    errors = list(chain(exc))
    if any(_allocation_refused(e) for e in errors):
        return Cause.OUT_OF_MEMORY
    if any(isinstance(e, PermissionError) or _names_a_refusal(e) for e in errors):
        return Cause.REFUSED
    return Cause.NONE


def _names_a_refusal(exc: BaseException) -> bool:
    """Code that caught a PermissionError and raised its own error names it there (``read
    secret: PermissionError``): the refusal is still the system's (under the sandbox, its)."""
    return PermissionError.__name__ in str(exc)


def _allocation_refused(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
        return True
    return isinstance(exc, RuntimeError) and any(words in str(exc) for words in ALLOCATION_REFUSED)
