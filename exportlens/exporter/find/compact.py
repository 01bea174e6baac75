"""Outlines, sketches and modules as compact JSON arrays, for the index cache and the
pool's results (no torch).

The codec (core/codec.py) names every type and field of every value it writes, so that
anything can cross a boundary; an index holds millions of values of a few known types,
and decoding them through it was most of a warm run. Here each type is written as a
positional array, in the order of its fields, and read back by the code that knows
which type each position holds: only these types come back, and data of the wrong shape
raises ``ValueError`` (a damaged cache is a miss). A finding, rare in an index, goes
through the codec.

Spans, parameters, forwards and modules are built as pickle builds an object: its
``__dict__`` filled, without ``__init__``. A frozen dataclass's ``__init__`` sets each
field through ``object.__setattr__``, at twice the cost, and the answer of a tree kept
whole holds a hundred thousand of them (these types have no ``__post_init__``;
tests/test_codec.py checks each comes back equal to the one written).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..core.codec import Codec, CodecError
from ..core.report import Edit, Finding, Fix, Kind, Narrowing, Related, Severity, Verified
from ..core.targets import Forward, ModuleClass, Param, Span
from .outline import BaseOutline, ClassOutline, FileOutline, Ref
from .prefilter import Sketch

FINDINGS = Codec(Finding, Fix, Verified, Narrowing, Edit, Related, Kind, Severity, Span)
_OUTLINE, _FINDING = 0, 1  # the tag of an outline's array: a file's outline, or its error
_BAD = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError)
_T = TypeVar("_T")
_new = object.__new__
log = logging.getLogger(__name__)


def _record(cls: type[_T], **fields: Any) -> _T:
    """``cls(**fields)`` without ``__init__`` (above: why); ``fields`` are all of its fields."""
    record = _new(cls)
    record.__dict__.update(fields)
    return record


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


# -- findings


def finding_data(f: Finding | None) -> Any:
    return FINDINGS.plain(f)


def finding_of(data: Any) -> Finding:
    try:
        found = FINDINGS.value(data)
    except CodecError as e:
        raise ValueError(str(e)) from None
    if not isinstance(found, Finding):
        raise ValueError("not a finding")
    return found


def maybe_finding(data: Any) -> Finding | None:
    return None if data is None else finding_of(data)


# -- positions and signatures


def span_data(s: Span | None) -> Any:
    return None if s is None else (s.line, s.column, s.end_line, s.end_column)


def span_of(d: Any) -> Span | None:
    return None if d is None else _span(d)


def _span(d: Any) -> Span:
    line, column, end_line, end_column = d
    return _record(Span, line=line, column=column, end_line=end_line, end_column=end_column)


def _param_data(p: Param) -> Any:
    return (p.name, p.kind, p.has_default, p.annotation, p.annotation_head, span_data(p.annotation_span))


def _param_of(d: Any) -> Param:
    name, kind, default, annotation, head, span = d
    return _record(
        Param, name=name, kind=kind, has_default=default, annotation=annotation, annotation_head=head,
        annotation_span=span_of(span),
    )  # fmt: skip


def forward_data(f: Forward | None) -> Any:
    if f is None:
        return None
    return ([_param_data(p) for p in f.params], span_data(f.span), span_data(f.name_span), f.body_lines)


def forward_of(d: Any) -> Forward | None:
    if d is None:
        return None
    params, span, name_span, (first, last) = d
    return _record(
        Forward, params=tuple(map(_param_of, params)), span=_span(span), name_span=_span(name_span),
        body_lines=(first, last),
    )  # fmt: skip


# -- modules (a check's answer)


def module_data(m: ModuleClass) -> Any:
    """A module, its forward as JSON text: reading the answer back makes one string of it, not
    the dozens of lists and numbers of its parameters (most modules of a check never read it)."""
    forward = None if m.forward is None else dumps(forward_data(m.forward))
    return (
        m.path, m.name, span_data(m.span), span_data(m.name_span), m.bases, forward,
        m.example_method, span_data(m.example_span), m.has_dynamic_shapes, m.jaxtyped,
    )  # fmt: skip


def module_of(d: Any) -> ModuleClass:
    path, name, span, name_span, bases, forward, example, example_span, dynamic, jaxtyped = d
    if forward is not None and not isinstance(forward, str):
        raise ValueError("not a forward")
    return _record(
        ModuleClass, path=path, name=name, span=_span(span), name_span=_span(name_span), bases=tuple(bases),
        _decode_forward=partial(_kept_forward, forward), example_method=example,
        example_span=span_of(example_span), has_dynamic_shapes=dynamic, jaxtyped=jaxtyped is True,
    )  # fmt: skip


def _kept_forward(text: str | None) -> Forward | None:
    """A kept module's forward, decoded when first read. The answer holding it was checked whole
    against its digest when read (index_cache.answer), so it is what ``module_data`` wrote; one
    that is not (written by someone else, digest and all) reads as no forward, never an error."""
    try:
        return None if text is None else loads(text, forward_of)
    except ValueError as e:
        log.warning("a kept forward does not decode (%s): read as none", e)
        return None


# -- sketches and outlines (the index's entries)


def sketch_data(s: Sketch | None) -> Any:
    return None if s is None else (s.classes, s.binds, s.marked)


def sketch_of(d: Any) -> Sketch | None:
    if d is None:
        return None
    classes, binds, marked = d
    return Sketch(tuple((name, tuple(bases)) for name, bases in classes), tuple(map(tuple, binds)), marked is True)


def outline_data(o: FileOutline | Finding | None) -> Any:
    if o is None:
        return None
    if isinstance(o, Finding):
        return (_FINDING, finding_data(o))
    classes = [_class_data(c) for c in o.classes.values()]
    return (_OUTLINE, str(o.path), o.rel, o.module, o.package, classes, o.imports, o.stars, o.assigned)


def outline_of(d: Any) -> FileOutline | Finding | None:
    if d is None:
        return None
    if d[0] == _FINDING:
        return finding_of(d[1])
    tag, path, rel, module, package, classes, imports, stars, assigned = d
    if tag != _OUTLINE:
        raise ValueError(f"unknown outline tag {tag!r}")
    found = (_class_of(c) for c in classes)
    return FileOutline(
        Path(path), rel, module, package, {c.name: c for c in found}, {k: tuple(v) for k, v in imports.items()},
        tuple(stars), tuple(assigned),
    )  # fmt: skip


def _class_data(c: ClassOutline) -> Any:
    example = None if c.example is None else (c.example[0], span_data(c.example[1]))
    bases = [(b.text, [(r.name, r.local) for r in b.refs]) for b in c.bases]
    nested = [_class_data(n) for n in c.nested.values()]
    return (
        c.name, c.qualname, span_data(c.span), span_data(c.name_span), bases, c.methods, c.attributes, nested,
        forward_data(c.forward), example,
    )  # fmt: skip


def _class_of(d: Any) -> ClassOutline:
    name, qualname, span, name_span, bases, methods, attributes, nested, forward, example = d
    inner = (_class_of(n) for n in nested)
    return ClassOutline(
        name, qualname, _span(span), _span(name_span),
        tuple(BaseOutline(text, tuple(Ref(n, local) for n, local in refs)) for text, refs in bases),
        tuple(methods), tuple(attributes), {c.name: c for c in inner}, forward_of(forward),
        None if example is None else (example[0], _span(example[1])),
    )  # fmt: skip
