"""A Python dict looked up by a dynamic size (``self.queries_for[x.shape[1]]``), EL305: while
exporting, the size is a symbol standing for every size, which no dict can hash, and a
dict lookup is Python, which no program keeps. What serves it is a program per size: the
dim made static at the example's size (its proof exports it), one export for each key."""

from __future__ import annotations

import re

from ...core.report import Fix
from ..compat import messages as forms
from ..context import Context
from ..locate import source_line
from ..reading.failures import Raised
from .changes import Change, ChangeKind
from .fixes import spec_fix

_SIZE = re.compile(r"\b(\w+)\s*\.\s*(?:shape\s*\[\s*(\d+)\s*\]|size\s*\(\s*(\d+)\s*\))")


def sized_lookup(record: Raised) -> bool:
    """Whether ``record`` is Python hashing a traced size (a dict or set looked up by it)."""
    return record.error == "TypeError" and record.text.startswith(forms.UNHASHABLE) and forms.SYMINT in record.text


def lookup_fix(record: Raised, ctx: Context) -> tuple[str, Fix] | None:
    """The message, and the dim the line reads made static at its example's size; None where
    the line names no input's dynamic axis."""
    frame = record.frame
    if frame is None or not sized_lookup(record):
        return None
    code = source_line(frame.filename, frame.line).strip()
    found = [(m[1], int(m[2] or m[3])) for m in _SIZE.finditer(code)]
    dims = [(ctx.built.names.by_input.get(p, {}).get(axis), p, axis) for p, axis in found]
    named = [(dim, p, axis) for dim, p, axis in dims if dim is not None and dim in ctx.built.names.roots]
    if not named:
        return None
    dim, param, axis = named[0]
    size = ctx.built.traced_size(dim)
    fix = spec_fix(Change(dim, ChangeKind.STATIC, value=str(size)), ctx, True) if size is not None else None
    if fix is None:
        return None
    message = (
        f"`{code}` looks a Python dict up by `{param}.shape[{axis}]`, the dynamic size `{dim}`: while exporting"
        f" it stands for every size, which a dict cannot hash ({record.error}: unhashable), and the program"
        f" keeps no Python lookup; export one program per size the dict holds"
    )
    return message, fix
