"""Records as positional JSON arrays, derived from their fields' types (standard library only).

The codec (codec.py) names every type and field of every value it writes, so that anything
can cross a boundary; a store of millions of values of a few known types (the workspace
index) needs none of that, as the reader knows what each position holds. Here a record is
an array of its fields in the order of ``dataclasses.fields``, each written as its
annotation says (``codec.field_types``): a record an array, an enum its value, a path its
text, a tuple or a list an array, a mapping an object; where a union holds two records,
``[which, row]``. Adding a field changes the form with no code edited (a store keeps its
format's version beside it, so an old row is a miss). Data of the wrong shape raises
``ValueError``; scalars are passed as they are."""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import is_dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from .codec import field_types

Convert = Callable[[Any], Any] | None  # None: the value is written and read as it is
_PLAIN = frozenset({int, float, str, bool, type(None), Any, object})
# rows of rows written out as nested comprehensions, this deep at most: deeper ones (a record that
# holds rows of its own kind would go on for ever) are read by a call per row
ROWS_INLINED = 2


class Rows:
    """The writer and reader of each type asked for, each built once."""

    def __init__(self) -> None:
        self._writers: dict[type, Callable[[Any], Any]] = {}
        self._readers: dict[type, Callable[[Any], Any]] = {}

    def write(self, hint: Any) -> Callable[[Any], Any]:
        """A function of a value of type ``hint`` that gives its JSON-ready form."""
        return self._writer(hint) or _same

    def read(self, hint: Any) -> Callable[[Any], Any]:
        """The inverse of ``write(hint)``."""
        return self._reader(hint) or _same

    def _writer(self, hint: Any) -> Convert:
        origin, args = get_origin(hint), get_args(hint)
        if hint in _PLAIN or isinstance(hint, str):
            return None
        if origin in (Union, types.UnionType):
            return _union_writer(args, self._writer)
        if origin is tuple and args and args[-1] is not Ellipsis:
            return _fixed(tuple(map(self._writer, args)), list)
        if origin in (tuple, list, Sequence):
            return _each(self._writer(args[0]), list)
        if origin in (dict, Mapping):
            return _values(self._writer(args[1]))
        if hint is Path:
            return str
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return attrgetter("value")
        if isinstance(hint, type) and is_dataclass(hint):
            return self._record_writer(hint)
        raise TypeError(f"no positional form for {hint!r}")

    def _reader(self, hint: Any) -> Convert:
        origin, args = get_origin(hint), get_args(hint)
        if hint in _PLAIN or isinstance(hint, str):
            return None
        if origin in (Union, types.UnionType):
            return _union_reader(args, self._reader)
        if origin is tuple and args and args[-1] is not Ellipsis:
            return _fixed(tuple(map(self._reader, args)), tuple)
        if origin in (tuple, Sequence):
            return _each(self._reader(args[0]), tuple)
        if origin is list:
            return _each(self._reader(args[0]), list)
        if origin in (dict, Mapping):
            return _values(self._reader(args[1]))
        if hint is Path or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
            return hint
        if isinstance(hint, type) and is_dataclass(hint):
            return self._record_reader(hint)
        raise TypeError(f"no positional form for {hint!r}")

    def _record_writer(self, cls: type) -> Callable[[Any], Any]:
        if cls not in self._writers:
            self._writers[cls] = lambda value: self._writers[cls](value)  # a record that holds its own kind
            names = tuple(field_types(cls))
            converts = tuple(map(self._writer, field_types(cls).values()))
            self._writers[cls] = _row_writer(names, converts)
        return self._writers[cls]

    def _record_reader(self, cls: type) -> Callable[[Any], Any]:
        if cls not in self._readers:
            self._readers[cls] = lambda data: self._readers[cls](data)
            self._readers[cls] = self._row_reader(cls)
        return self._readers[cls]

    def _row_reader(self, cls: type) -> Callable[[Any], Any]:
        """``cls`` built by its own constructor, so its checks run as for any other record. Its
        reader is written out as the source of one function, as ``dataclasses`` writes a
        record's ``__init__``: a generic loop over the fields would be most of reading an index."""
        scope: dict[str, Any] = {"cls": cls}
        hints = list(field_types(cls).values())
        names = [f"f{i}" for i in range(len(hints))]
        given = ", ".join(self._expression(h, n, scope, 0) for h, n in zip(hints, names))
        source = (
            "def read(data):\n"
            f"    if data.__class__ is not list or len(data) != {len(hints)}:\n"
            f"        raise ValueError('not a {cls.__name__} row')\n"
            f"    {''.join(n + ', ' for n in names) or '_'} = data\n"
            f"    return cls({given})\n"
        )
        exec(source, scope)  # the source says field positions alone, never anything read
        read: Callable[[Any], Any] = scope["read"]
        return read

    def _expression(self, hint: Any, name: str, scope: dict[str, Any], depth: int) -> str:
        """The source of ``name`` (a field's JSON value) read as ``hint``, inside ``depth`` comprehensions."""
        kinds = [a for a in get_args(hint) if a is not type(None)]
        if get_origin(hint) in (Union, types.UnionType) and len(kinds) == 1 and len(get_args(hint)) == 2:
            inner = self._expression(kinds[0], name, scope, depth)
            return name if inner == name else f"(None if {name} is None else {inner})"
        if get_origin(hint) is tuple and get_args(hint)[-1:] == (Ellipsis,):
            each = self._reader(get_args(hint)[0])
            if each is None:
                return f"tuple({name})"
            item = get_args(hint)[0]
            if isinstance(item, type) and is_dataclass(item) and field_types(item) and depth < ROWS_INLINED:
                return self._rows_expression(item, name, scope, depth)
            scope[f"c_{name}"] = each
            return f"tuple(map(c_{name}, {name}))"
        if isinstance(hint, type) and is_dataclass(hint) and not any(map(self._reader, field_types(hint).values())):
            scope[f"c_{name}"], scope["bad"], size = hint, _bad, len(field_types(hint))  # (a span): built in place
            return f"(c_{name}(*{name}) if {name}.__class__ is list and len({name}) == {size} else bad())"
        convert = self._reader(hint)
        if convert is None:
            return name
        scope[f"c_{name}"] = convert
        return f"c_{name}({name})"

    def _rows_expression(self, cls: type, name: str, scope: dict[str, Any], depth: int) -> str:
        """The source of ``name``, a list of ``cls`` rows, read in one comprehension: the unpacking
        checks each row's length, and no call is made per row but the constructor's."""
        hints = list(field_types(cls).values())
        names = [f"{name}_{i}" for i in range(len(hints))]
        scope[f"k_{name}"] = cls
        given = ", ".join(self._expression(h, n, scope, depth + 1) for h, n in zip(hints, names))
        return f"tuple([k_{name}({given}) for {''.join(n + ', ' for n in names)} in {name}])"


def _same(value: Any) -> Any:
    return value


def _bad() -> Any:
    raise ValueError("a row of another shape")


def _row_writer(names: tuple[str, ...], converts: tuple[Convert, ...]) -> Callable[[Any], Any]:
    def write(value: Any) -> Any:
        return [v if c is None else c(v) for c, v in zip(converts, [getattr(value, n) for n in names])]

    if len(names) < 2 or any(converts):
        return write
    return attrgetter(*names)  # a tuple: JSON writes it as an array


def _each(convert: Convert, kind: type) -> Convert:
    if convert is None:
        return None if kind is list else kind
    return lambda data: kind(map(convert, data))


def _fixed(converts: tuple[Convert, ...], kind: type) -> Convert:
    size = len(converts)

    def convert(data: Any) -> Any:
        if len(data) != size:
            raise ValueError(f"expected {size} items, got {len(data)}")
        return kind([v if c is None else c(v) for c, v in zip(converts, data)])

    def plain(data: Any) -> Any:
        if len(data) != size:
            raise ValueError(f"expected {size} items, got {len(data)}")
        return tuple(data)

    if any(converts):
        return convert
    return None if kind is list else plain


def _values(convert: Convert) -> Convert:
    if convert is None:
        return None
    return lambda data: {k: convert(v) for k, v in data.items()}


def _union_writer(args: tuple[Any, ...], writer: Callable[[Any], Convert]) -> Convert:
    kinds = [a for a in args if a is not type(None)]
    if not any(map(writer, kinds)):
        return None  # scalars alone: written as they are
    if len(kinds) == 1:
        one = writer(kinds[0])
        return None if one is None else lambda value: None if value is None else one(value)
    tagged = {kind: (i, writer(kind)) for i, kind in enumerate(kinds)}

    def write(value: Any) -> Any:
        if value is None:
            return None
        i, convert = tagged[type(value)]
        return [i, value if convert is None else convert(value)]

    return write


def _union_reader(args: tuple[Any, ...], reader: Callable[[Any], Convert]) -> Convert:
    kinds = [a for a in args if a is not type(None)]
    if not any(map(reader, kinds)):
        return None
    if len(kinds) == 1:
        one = reader(kinds[0])
        return None if one is None else lambda data: None if data is None else one(data)
    converts = [reader(kind) for kind in kinds]

    def read(data: Any) -> Any:
        if data is None:
            return None
        i, value = data
        convert = converts[i]
        return value if convert is None else convert(value)

    return read
