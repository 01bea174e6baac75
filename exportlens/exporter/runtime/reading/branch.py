"""Which way did the example inputs go? (torch side)

A data-dependent branch cannot be decided while tracing, but the example inputs
decide it when forward runs eagerly. Run it once, stop at the user's line, and
evaluate each candidate condition there in that frame's own variables: the
``torch._check`` that holds on the example is the fix to prefer (one that does not
would export a program that fails on the very inputs it was exported with).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any

import torch

from ..inputs import Built, copied
from ..locate import Frame


def truth_at(model: torch.nn.Module, built: Built, where: Frame, conditions: Sequence[str]) -> tuple[bool | None, ...]:
    """Each condition's value the first time forward reaches ``where``'s line, on the example
    inputs; None for one that cannot be evaluated, or for all when the line is never reached."""
    found = _first_visit(model, built, where, lambda frame: {code: _evaluate(code, frame) for code in conditions})
    return tuple(found.get(code) for code in conditions)


def tensors_at(model: torch.nn.Module, built: Built, where: Frame, expressions: Sequence[str] = ()) -> frozenset[str]:
    """The local names that hold tensors the first time forward reaches ``where``'s line
    (what a ``torch.cond`` there can take as operands), and those of ``expressions`` that
    give one there (what ``int(...)`` converts: ``lengths.max()``)."""

    def look(frame: FrameType) -> dict[str, bool]:
        names = {k: isinstance(v, torch.Tensor) for k, v in frame.f_locals.items()}
        return names | {code: isinstance(_value(code, frame), torch.Tensor) for code in expressions}

    found = _first_visit(model, built, where, look)
    return frozenset(k for k, is_tensor in found.items() if is_tensor)


def _first_visit(model: torch.nn.Module, built: Built, where: Frame, look: Any) -> dict[str, Any]:
    """What ``look`` says of the frame the first time forward reaches ``where``'s line ({} if never)."""
    found: dict[str, Any] = {}
    filename = os.path.abspath(where.filename)
    seen = False

    def on_line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal seen
        if event == "line" and frame.f_lineno == where.line and not seen:
            seen = True
            found.update(look(frame))
        return on_line

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        if seen or os.path.abspath(frame.f_code.co_filename) != filename:
            return None
        return on_line

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        with torch.no_grad():
            model(*copied(built.args), **copied(built.kwargs))
    except Exception:
        pass  # what forward raises past the line is not this question's
    finally:
        sys.settrace(previous)
    return found


_UNKNOWN = object()  # an expression that cannot be evaluated there


def value_at(model: torch.nn.Module, built: Built, where: Frame, code: str) -> Any:
    """``code``'s value the first time forward reaches ``where``'s line, on the example
    inputs (``lengths.max().item()``); None where it cannot be evaluated."""
    value = _first_visit(model, built, where, lambda frame: {code: _value(code, frame)}).get(code)
    return None if value is _UNKNOWN else value


def _value(code: str, frame: FrameType) -> Any:
    try:
        return eval(code, frame.f_globals, dict(frame.f_locals))  # the user's own expression, in their own frame
    except Exception:
        return _UNKNOWN


def _evaluate(code: str, frame: FrameType) -> bool | None:
    value = _value(code, frame)
    if value is _UNKNOWN:
        return None
    if isinstance(value, torch.Tensor):
        return bool(value.item()) if value.numel() == 1 else None
    return bool(value)
