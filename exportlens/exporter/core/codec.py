"""Dataclasses <-> JSON for every process boundary: the worker protocol, the workspace
index, the plan a worker is handed. Standard library only.

Self-describing, so nothing needs type hints to decode: a dataclass is an object with
``"$type"`` naming it, and tuples, paths, enums and dicts whose keys are not plain
strings are tagged too. Only the types a codec was made with can come back out, so a
message can never name code to run (which is why this is not pickle).

The types are the schema: a codec is made from its roots (the messages, the records a
file keeps) and carries every dataclass and enum their fields' annotations reach
(``records``), so a record added to a field travels with no list edited by hand. A field
typed ``Any`` says nothing: what it may hold is named as a root beside the type."""

from __future__ import annotations

import enum
import json
from collections import deque
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_type_hints

TYPE, TUPLE, PATH, ENUM, DICT = "$type", "$tuple", "$path", "$enum", "$dict"


class CodecError(ValueError):
    """The value has, or the text names, a type this codec does not carry."""


def records(*roots: Any) -> tuple[type, ...]:
    """Every dataclass and enum that ``roots`` (types, or unions of them) are or reach through
    their fields' annotations, the roots first."""
    found: dict[type, None] = {}
    todo = deque(roots)
    while todo:
        hint = todo.popleft()
        if isinstance(hint, type) and (is_dataclass(hint) or issubclass(hint, enum.Enum)):
            if hint not in found:
                found[hint] = None
                todo.extend(field_types(hint).values() if is_dataclass(hint) else ())
        else:
            todo.extend(get_args(hint))  # a union, a container's items (a string's args are none)
    return tuple(found)


@cache
def field_types(cls: type) -> dict[str, Any]:
    """A dataclass's fields and their types, in the order of its fields (annotations evaluated once)."""
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in fields(cls)}


class Codec:
    def __init__(self, *roots: Any) -> None:
        """Carries ``records(*roots)``."""
        types = records(*roots)
        self.types = {t.__name__: t for t in types}
        self._fields: dict[type, tuple[str, tuple[str, ...]]] = {}  # a dataclass carried: its name and fields
        self._field_names: dict[type, frozenset[str]] = {}
        if len(self.types) != len(types):
            raise ValueError("two types of one name: the wire could not tell them apart")

    def dumps(self, value: Any) -> str:
        return json.dumps(self.plain(value), ensure_ascii=False, separators=(",", ":"))

    def loads(self, text: str | bytes) -> Any:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise CodecError(f"not JSON: {e}") from None
        return self.value(data)

    def plain(self, value: Any) -> Any:
        """``value`` as JSON-ready data."""
        kind = type(value)
        names = self._fields.get(kind)  # the common cases first, by exact type: an index is millions of values
        if names is not None:
            return {TYPE: names[0], **{n: self.plain(getattr(value, n)) for n in names[1]}}
        if value is None or kind in _SCALARS:
            return value
        if kind is tuple:
            return {TUPLE: [self.plain(v) for v in value]}
        if isinstance(value, enum.Enum):  # before str: a str-valued enum is a str too
            return {ENUM: self._known(kind), "value": value.value}
        if isinstance(value, (bool, int, float, str)):
            return value
        if is_dataclass(value) and not isinstance(value, type):
            self._fields[kind] = (self._known(kind), tuple(f.name for f in fields(value)))
            return self.plain(value)
        if isinstance(value, Path):
            return {PATH: str(value)}
        if isinstance(value, tuple):
            return {TUPLE: [self.plain(v) for v in value]}
        if isinstance(value, list):
            return [self.plain(v) for v in value]
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in value):
                return {k: self.plain(v) for k, v in value.items()}
            return {DICT: [[self.plain(k), self.plain(v)] for k, v in value.items()]}
        raise CodecError(f"cannot carry a {type(value).__name__} across the boundary")

    def value(self, data: Any) -> Any:
        """The inverse of ``plain``; CodecError where ``data`` builds nothing this codec
        carries (a missing field, an enum's unknown value, a record's own check failing)."""
        try:
            return self._value(data)
        except CodecError:
            raise
        except (TypeError, ValueError, KeyError, RecursionError) as e:
            raise CodecError(f"{type(e).__name__}: {str(e)[:200]}") from None

    def _value(self, data: Any) -> Any:
        if isinstance(data, list):
            return [self._value(v) for v in data]
        if not isinstance(data, dict):
            return data
        if TYPE in data:
            cls = self._named(data[TYPE])
            names = self._names(cls)
            given = {k: self._value(v) for k, v in data.items() if k != TYPE}
            if not given.keys() <= names:
                raise CodecError(f"{cls.__name__} has no field {sorted(given.keys() - names)}")
            return cls(**given)
        if ENUM in data:
            return self._named(data[ENUM])(data["value"])
        if PATH in data:
            return Path(data[PATH])
        if TUPLE in data:
            return tuple(self._value(v) for v in data[TUPLE])
        if DICT in data:
            return {_hashable(self._value(k)): self._value(v) for k, v in data[DICT]}
        return {k: self._value(v) for k, v in data.items()}

    def _names(self, cls: type) -> frozenset[str]:
        if cls not in self._field_names:
            self._field_names[cls] = frozenset(f.name for f in fields(cls))
        return self._field_names[cls]

    def _known(self, cls: type) -> str:
        if self.types.get(cls.__name__) is not cls:
            raise CodecError(f"{cls.__name__} is not a type this codec carries")
        return cls.__name__

    def _named(self, name: Any) -> type:
        cls = self.types.get(name) if isinstance(name, str) else None
        if cls is None:
            raise CodecError(f"unknown type {name!r}")
        return cls


_SCALARS = frozenset({bool, int, float, str})


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key
