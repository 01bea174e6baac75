"""The guard record: each guard and runtime assertion an exported program carries, in the
user's dim names, on the user's line that made it. Plain data, no torch."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class GuardKind(str, enum.Enum):
    RANGE = "range"  # a bound on one dim: declared (``2 <= n <= 48``) or met on a line
    RELATION = "relation"  # ties two or more dims (``m == n + 1``)
    SPECIALIZATION = "specialization"  # a dim became a constant
    RUNTIME_ASSERT = "runtime-assert"  # checked when the program runs (``torch._check`` on a value read from data)


@dataclass(frozen=True)
class Guard:
    kind: GuardKind
    text: str  # Python over the user's dim names, simplified: ``k <= 256``
    path: str | None = None  # relative to the project root; None: the program's own (a declared range)
    line: int | None = None
    dims: tuple[
        str, ...
    ] = ()  # the sizes it names, sorted, as its text names them (``seq``, ``x.shape[1]``); () before 2.3
    value: int | None = None  # a specialization's constant (the dim is ``dims[0]``)
