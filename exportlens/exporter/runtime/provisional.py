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

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

from .failures import DataDependent, data_dependent, read_failure
from .inputs import Built
from .locate import Frame, GuardLog, ProjectFiles, record_guards

MAX_GUARDS = 64  # a loop meets its branch once per iteration: enough for every line of a forward


def provisional_records(model: torch.nn.Module, built: Built, files: ProjectFiles) -> tuple[DataDependent, ...]:
    """The data-dependent guards met while exporting ``model`` with each taken as false
    (and what stopped the export, where it is one too), in the order met."""
    met: list[tuple[GuardOnDataDependentSymNode, Frame | None]] = []
    with record_guards(files) as log, _taken_as_false(files, met):
        try:
            torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=False)
            stopped: tuple[Any, ...] = ()
        except Exception as exc:
            stopped = read_failure(exc, log, built)
    return tuple(_records(met, log, built)) + tuple(r for r in stopped if isinstance(r, DataDependent))


def _records(met: list[tuple[GuardOnDataDependentSymNode, Frame | None]], log: GuardLog, built: Built) -> Iterator[DataDependent]:
    for dde, frame in met:
        if frame is not None:
            yield data_dependent(dde, frame, log, built, str(dde))


@contextmanager
def _taken_as_false(files: ProjectFiles, met: list[tuple[GuardOnDataDependentSymNode, Frame | None]]) -> Iterator[None]:
    """``ShapeEnv.evaluate_expr`` answering a data-dependent guard with false (torch's own
    ``fallback_value``, as ``guard_or_false`` does), after noting it and the user's frame."""
    evaluate = ShapeEnv.evaluate_expr

    def evaluate_expr(self: ShapeEnv, orig_expr: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return evaluate(self, orig_expr, *args, **kwargs)
        except GuardOnDataDependentSymNode as dde:
            given = args[3] if len(args) > 3 else kwargs.get("fallback_value")
            if given is not None or len(met) >= MAX_GUARDS:
                raise
            met.append((dde, _user_frame(files, sys._getframe(1))))
            return evaluate(self, orig_expr, *args[:3], **{**kwargs, "fallback_value": False})

    ShapeEnv.evaluate_expr = evaluate_expr
    try:
        yield
    finally:
        ShapeEnv.evaluate_expr = evaluate


def _user_frame(files: ProjectFiles, frame: FrameType | None) -> Frame | None:
    """The deepest frame of the project's on the live stack, with its locals (they name the guard)."""
    while frame is not None:
        if frame.f_code.co_filename in files:
            return Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, dict(frame.f_locals))
        frame = frame.f_back
    return None
