"""How a specialization is said (EL204): the dim, the size it was pinned to, and the line.

A Python loop over a dynamic dim (``for i in range(l)``, a sequential scan) is said as what it
is: torch.export runs the loop while it traces, so the program holds one copy of its body per
step of the example, and the size is pinned by the loop itself, not by a size in the code."""

from __future__ import annotations

import re

from ...core.report import Related
from ..library import short_path
from ..locate import source_line
from ..reading.violations import Specialization

_LOOP = re.compile(r"^\s*(async\s+)?for\b.*\bin\s+(range|enumerate|zip)\(")


def specialized_message(record: Specialization) -> str:
    frame = record.frame
    if record.by_guards:
        where = f", the first on line {frame.line}: `{source_line(frame.filename, frame.line)}`" if frame else ""
        return (
            f"`{record.dim}` was declared dynamic, but what the code requires of it leaves only the size"
            f" {record.value}{where}"
        )
    code = source_line(frame.filename, frame.line) if frame else ""
    where = f" by line {frame.line}: `{code}`" if frame else ""
    if record.derived:
        size, value = record.derived
        return (
            f"`{size}` was declared dynamic but was specialized to {value} (so `{record.dim}` to {record.value}){where}"
        )
    if frame and record.inside:
        return _in_library(record, code)
    if frame and _LOOP.match(code):
        return (
            f"`{record.dim}` was declared dynamic, but the Python loop on line {frame.line} (`{code}`) runs once per"
            f" step of it, and torch.export unrolls it for the example's {record.value} steps: the program takes"
            f" only `{record.dim}` = {record.value}"
        )
    return f"`{record.dim}` was declared dynamic but was specialized to {record.value}{where}"


def _in_library(record: Specialization, code: str) -> str:
    """Pinned inside an installed library reached from the user's line: the library's line is
    named (torch's own message names neither), and a loop there is said as the loop it is."""
    inside, frame = record.inside, record.frame
    assert inside is not None and frame is not None
    where = f"`{short_path(inside.filename)}:{inside.line}`"
    written = source_line(inside.filename, inside.line)
    if _LOOP.match(written):
        return (
            f"`{record.dim}` was declared dynamic, but the Python loop at {where} (`{written}`), reached from"
            f" line {frame.line} (`{code}`), runs once per step of it, and torch.export unrolls it for the"
            f" example's {record.value} steps: the program takes only `{record.dim}` = {record.value}"
        )
    return (
        f"`{record.dim}` was declared dynamic but was specialized to {record.value} inside {where}"
        f" (`{written}`), reached from line {frame.line}: `{code}`"
    )


def library_related(record: Specialization) -> tuple[Related, ...]:
    """The library's line that pinned the dim, as related information beside the user's."""
    inside = record.inside
    if inside is None or record.frame is None:
        return ()
    return (Related(inside.filename, inside.line, f"`{source_line(inside.filename, inside.line)}` in {inside.name}"),)
