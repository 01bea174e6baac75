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
import sysconfig
import tokenize
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from types import FrameType, TracebackType
from typing import Any

import sympy
import torch

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
    inside: Frame | None = None  # the installed library's line that made it, below the user's (``live_frames``)


# torch's own frames (its ops, its export machinery), sympy's and exportlens' are the
# mechanism, not a line the user can look up to learn why; nor is the standard library
_MECHANISM = tuple(
    os.path.join(os.path.dirname(os.path.abspath(m.__file__ or "")), "")
    for m in (torch, sympy, sys.modules[__name__.partition(".")[0]])
)
_STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")


@cache  # asked of each frame of each guard's stack: a few hundred files, again and again
def is_package(filename: str) -> bool:
    """Whether a file is an installed package's (transformers, torchvision), not the mechanism."""
    path = os.path.abspath(filename)
    if not os.path.isabs(filename) or path.startswith(_MECHANISM):
        return False  # (torch names some of its frames relative)
    return not path.startswith(_STDLIB) or "-packages" in path


def live_frames(files: Sources, frame: FrameType | None) -> tuple[Frame | None, Frame | None]:
    """One walk of the live stack from ``frame`` out: the deepest frame in a project file (the
    user's line), and the deepest frame of an installed package below it, where a guard was made
    in code the user did not write (with no project frame on the stack: the deepest of all)."""
    inside = None
    while frame is not None:
        code = frame.f_code
        if files.owns(code.co_filename):
            return Frame(code.co_filename, frame.f_lineno, code.co_name), inside
        if inside is None and is_package(code.co_filename):
            inside = Frame(code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None, inside


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

    def here(self, frame: FrameType | None) -> tuple[Frame | None, Frame | None]:
        """The user's frame and the installed package's below it (``live_frames``), on the stack
        from ``frame`` (the shape env's caller) out."""
        user, inside = live_frames(self.files, frame)
        if user is None:  # strict mode: user frames live in dynamo's tracing context
            user = deepest_in_summary(self.files, tracing_stack())
        return user, inside

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
            log.events.append(Event("guard", what, *log.here(sys._getframe(1))))
        elif kind == "replace":
            log.events.append(Event("replace", sympy.Eq(*what, evaluate=False), *log.here(sys._getframe(1))))

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
