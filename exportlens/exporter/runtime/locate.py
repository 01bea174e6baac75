"""Where in the user's code did torch decide something? (torch side)

torch's own guard records mostly point into its fake kernels, and its
constraint-violation messages name no line at all. So while an export runs we
record, for every guard the shape env adds and every symbol it replaces, the
deepest frame of the Python stack that lies in a project file: the user's line,
found in the same run, with no second (draft) export.
"""

from __future__ import annotations

import io
import linecache
import os
import sys
import tokenize
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import PurePath
from types import FrameType, TracebackType
from typing import Any

import sympy

from ..core.sources import Sources
from .compat.internals import shape_env_events, tracing_stack


@dataclass(frozen=True)
class Frame:
    filename: str  # absolute
    line: int
    name: str
    locals: dict[str, Any] | None = None  # the frame's live values: only from a traceback


@dataclass(frozen=True)
class Event:
    """Something the shape env decided: a guard, or a symbol replaced (specialized / unified)."""

    kind: str  # "guard" | "replace"
    expr: sympy.Basic  # the guard, or Eq(symbol, replacement)
    frame: Frame | None
    inside: Frame | None = None  # the installed library's line that made it, below the user's (``library_frame``)


def deepest_live(files: Sources, frame: FrameType | None) -> Frame | None:
    while frame is not None:
        if files.owns(frame.f_code.co_filename):
            return Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


# packages on every export's stack, between a library's line and torch's shape env: never the library
_TRACING = frozenset({"torch", "functorch", "sympy", "optree", "typing_extensions", "exportlens"})


def library_frame(files: Sources, frame: FrameType | None) -> Frame | None:
    """The deepest frame of an installed library (transformers, torchvision) below the user's
    deepest one: where a guard was made in code the user did not write. None where the user's
    own line is reached first, or no library is on the stack."""
    while frame is not None:
        name = frame.f_code.co_filename
        if files.owns(name):
            return None
        package = _installed_package(name)
        if package and package not in _TRACING:
            return Frame(name, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def _installed_package(filename: str) -> str | None:
    """The top-level package an installed file belongs to (``transformers``), None outside site-packages."""
    parts = PurePath(filename).parts
    at = [i for i, part in enumerate(parts[:-1]) if part in ("site-packages", "dist-packages")]
    return PurePath(parts[at[-1] + 1]).stem if at else None


def library_path(filename: str) -> str:
    """A library file as its package names it (``transformers/models/mamba/modeling_mamba.py``):
    relative to the ``sys.path`` entry that holds it."""
    roots = [os.path.join(os.path.abspath(p), "") for p in sys.path if p]
    root = max((r for r in roots if filename.startswith(r)), key=len, default="")
    return filename[len(root) :] if root else os.path.basename(filename)


def deepest_in_traceback(files: Sources, tb: TracebackType | None) -> Frame | None:
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if files.owns(code.co_filename):
            found = Frame(code.co_filename, tb.tb_lineno, code.co_name, dict(tb.tb_frame.f_locals))
        tb = tb.tb_next
    return found


def deepest_in_summary(files: Sources, stack: list[traceback.FrameSummary] | None) -> Frame | None:
    for fs in reversed(stack or []):
        if files.owns(fs.filename):
            return Frame(fs.filename, fs.lineno or 1, fs.name)
    return None


def deepest_in_text(files: Sources, stack_trace: str | None) -> Frame | None:
    """A node's ``meta['stack_trace']``: 'File "...", line N, in name' lines."""
    found = None
    for line in (stack_trace or "").splitlines():
        line = line.strip()
        if not line.startswith("File "):
            continue
        try:
            fname, rest = line[6:].split('", line ', 1)
            lineno, _, name = rest.partition(", in ")
            # torch writes some of its own frames relative ("torch/fx/passes/..."): only
            # an absolute path can be told apart from a project file of the same name
            if os.path.isabs(fname) and files.owns(fname):
                found = Frame(fname, int(lineno), name.strip())
        except ValueError:
            continue
    return found


@dataclass
class GuardLog:
    """What ``record_guards`` saw: the events in order, and the shape env they came from."""

    files: Sources  # which files are the user's (``Sources.owns``)
    events: list[Event] = field(default_factory=list)
    shape_env: Any = None

    def here(self) -> Frame | None:
        """The deepest project frame of the stack that called the shape env."""
        frame = deepest_live(self.files, sys._getframe(3))
        if frame is None:  # strict mode: user frames live in dynamo's tracing context
            frame = deepest_in_summary(self.files, tracing_stack())
        return frame

    def first(self, symbols: set[sympy.Symbol], kinds: tuple[str, ...] = ("guard", "replace")) -> Event | None:
        """The first located event that mentions any of ``symbols``."""
        for event in self.events:
            if event.kind in kinds and event.frame and event.expr.free_symbols & symbols:
                return event
        return None


@contextmanager
def record_guards(files: Sources) -> Iterator[GuardLog]:
    """Record every guard and replacement, with the user's frame, while exporting."""
    log = GuardLog(files)

    def on_event(shape_env: Any, kind: str, what: Any) -> None:
        log.shape_env = shape_env
        if kind == "guard":
            log.events.append(Event("guard", what, log.here(), library_frame(files, sys._getframe(1))))
        elif kind == "replace":
            expr = sympy.Eq(*what, evaluate=False)
            log.events.append(Event("replace", expr, log.here(), library_frame(files, sys._getframe(1))))

    with shape_env_events(on_event):
        yield log


def source_line(filename: str, line: int) -> str:
    """The line as written, without a trailing comment (quoted in messages)."""
    text = linecache.getline(filename, line)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text.strip()
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return (text[: comment.start[1]] if comment else text).strip()
