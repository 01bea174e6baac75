"""Every data-dependent branch in one run, where draft export cannot say (torch side).

Draft export finds the data-dependent guards past the first by running the real
tensors beside the fake ones, and in torch 2.13 it fails outright on some ordinary
code (``torch.nonzero(..., as_tuple=True)`` in a loop: PendingUnbackedSymbolNotFound).
Then the module is exported once more, non-strict, with each data-dependent guard
taken provisionally: the guard is recorded on the user's line and tracing goes on
as if it were false, to meet the next one. The program traced this way is thrown
away: only the records are kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import torch

from ...core.sources import Sources
from ..compat.internals import GuardOnDataDependentSymNode, data_dependent_as_false
from ..inputs import Built
from ..locate import Frame, GuardLog, record_guards
from .failures import DataDependent, Record, data_dependent, read_failure
from .violations import Constraint

MAX_GUARDS = 64  # a loop meets its branch once per iteration: enough for every line of a forward


def provisional_records(model: torch.nn.Module, built: Built, files: Sources) -> tuple[Record, ...]:
    """The data-dependent guards met while exporting ``model`` with each taken as false, in
    the order met, and what stopped the export where it is one too or a constraint the spec
    breaks past them (a loop pinning a dim, met only once the branch before it is passed)."""
    met: list[tuple[GuardOnDataDependentSymNode, Frame | None]] = []
    with record_guards(files) as log, _taken_as_false(files, met):
        try:
            torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=False)
            stopped: tuple[Any, ...] = ()
        except Exception as exc:
            stopped = read_failure(exc, log, built)
    return tuple(_records(met, log, built)) + tuple(r for r in stopped if isinstance(r, DataDependent | Constraint))


def _records(
    met: list[tuple[GuardOnDataDependentSymNode, Frame | None]], log: GuardLog, built: Built
) -> Iterator[DataDependent]:
    for dde, frame in met:
        if frame is not None:
            yield data_dependent(dde, frame, log, built, str(dde))


@contextmanager
def _taken_as_false(files: Sources, met: list[tuple[GuardOnDataDependentSymNode, Frame | None]]) -> Iterator[None]:
    """A data-dependent guard answered with false (as ``guard_or_false`` does), after noting
    it and the user's frame; past MAX_GUARDS, raised as torch does."""

    def on_guard(dde: GuardOnDataDependentSymNode, caller: FrameType | None) -> bool:
        if len(met) >= MAX_GUARDS:
            return False
        met.append((dde, _user_frame(files, caller)))
        return True

    with data_dependent_as_false(on_guard):
        yield


def _user_frame(files: Sources, frame: FrameType | None) -> Frame | None:
    """The deepest frame of the project's on the live stack, with its locals (they name the guard)."""
    while frame is not None:
        if files.owns(frame.f_code.co_filename):
            return Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, dict(frame.f_locals))
        frame = frame.f_back
    return None
