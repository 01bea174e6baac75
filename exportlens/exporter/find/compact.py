"""Outlines, sketches and modules as compact JSON arrays, for the index cache and the
pool's results (no torch).

The codec (core/codec.py) names every type and field of every value it writes, so that
anything can cross a boundary; an index holds millions of values of a few known types,
and decoding them through it would be most of a warm run. Here each record is a positional
array of its fields, the form derived from the records' own fields (core/rows.py): only
these types come back, each built by its constructor, and data of the wrong shape raises
``ValueError`` (a damaged cache is a miss).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..core.report import Finding
from ..core.rows import Rows
from ..core.targets import ModuleClass
from .outline import FileOutline
from .prefilter import Sketch

ROWS = Rows()
_BAD = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError)
_SKETCH = (ROWS.write(Sketch | None), ROWS.read(Sketch | None))
_OUTLINE = (ROWS.write(FileOutline | Finding | None), ROWS.read(FileOutline | Finding | None))
_MODULE = (ROWS.write(ModuleClass), ROWS.read(ModuleClass))
_FINDING = (ROWS.write(Finding | None), ROWS.read(Finding | None))


def dumps(value: Any, *, ascii: bool = False) -> str:
    """``ascii``: every character but ASCII escaped, a lone surrogate too (a file name that is
    not UTF-8 comes back as Python named it, where the text itself could not be written as UTF-8)."""
    return json.dumps(value, ensure_ascii=ascii, separators=(",", ":"), check_circular=False)


def loads(text: str | bytes, read: Callable[[Any], Any]) -> Any:
    """``read`` of the JSON ``text``; ValueError for text or data of any other shape."""
    try:
        return read(json.loads(text))
    except _BAD as e:
        raise ValueError(f"not a compact value: {type(e).__name__}: {str(e)[:200]}") from None


def finding_data(f: Finding | None) -> Any:
    return _FINDING[0](f)


def finding_of(data: Any) -> Finding:
    found = _FINDING[1](data)
    if found is None:
        raise ValueError("not a finding")
    return found


def maybe_finding(data: Any) -> Finding | None:
    found: Finding | None = _FINDING[1](data)
    return found


def module_data(m: ModuleClass) -> Any:
    return _MODULE[0](m)


def module_of(data: Any) -> ModuleClass:
    module: ModuleClass = _MODULE[1](data)
    return module


def sketch_data(s: Sketch | None) -> Any:
    return _SKETCH[0](s)


def sketch_of(data: Any) -> Sketch | None:
    sketch: Sketch | None = _SKETCH[1](data)
    return sketch


def outline_data(o: FileOutline | Finding | None) -> Any:
    return _OUTLINE[0](o)


def outline_of(data: Any) -> FileOutline | Finding | None:
    outline: FileOutline | Finding | None = _OUTLINE[1](data)
    return outline
