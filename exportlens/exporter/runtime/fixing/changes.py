"""What a fix does to the spec's dims (``Change``), and torch's own "Suggested fixes" read
as such changes (torch side: torch's refinement of the user's dynamic_shapes)."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes

from ..compat.internals import is_dim
from ..naming.guard_ranges import bounds_declared, finite


class ChangeKind(enum.Enum):
    BOUNDS = enum.auto()  # a new min and/or max
    STATIC = enum.auto()  # one fixed size
    SUBSTITUTE = enum.auto()  # another dim, or an expression of one


@dataclass(frozen=True)
class Change:
    """What a fix does to one named dim."""

    dim: str
    kind: ChangeKind
    min: int | None = None
    max: int | None = None
    value: str = ""  # STATIC: the size; SUBSTITUTE: the dim or expression the dim becomes

    def __post_init__(self) -> None:
        if (self.kind is ChangeKind.BOUNDS) == bool(self.value):
            raise ValueError(f"a {self.kind.name} change of {self.dim} with value {self.value!r}")

    @property
    def title(self) -> str:
        if self.kind is ChangeKind.STATIC:
            return f"Make `{self.dim}` static: size {self.value}"
        if self.kind is ChangeKind.SUBSTITUTE:  # (bounds here are the new dim's: ``n = 2*_n`` with ``_n >= 3``)
            bounds = " and ".join(
                f"`{self.root} {op} {v}`" for op, v in ((">=", self.min), ("<=", self.max)) if v is not None
            )
            return f"Declare `{self.dim} = {self.value}`" + (f" with {bounds}" if bounds else "")
        bounds = ", ".join(f"{k}={v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None)
        return f"Set `{self.dim}` to Dim('{self.dim}', {bounds})"

    @property
    def root(self) -> str:
        """SUBSTITUTE: the dim the value is written over (``_n`` of ``2*_n``)."""
        return root_of(self.value) if self.kind is ChangeKind.SUBSTITUTE and re.search(r"[A-Za-z_]", self.value) else ""

    def __str__(self) -> str:
        return self.title


def root_of(size: str) -> str:
    """The dim a size of the spec is written over: ``dy`` of ``dy - 6`` (and of ``dy``)."""
    return re.findall(r"[A-Za-z_]\w*", size)[0]


# -- torch's suggested fixes ------------------------------------------------------------


def suggested_changes(msg: str, dynamic_shapes: Any) -> list[Change]:
    """torch's "Suggested fixes" as one Change per named dim, read off the dynamic_shapes
    that torch's own ``refine_dynamic_shapes_from_suggested_fixes`` makes of the user's."""
    if "Suggested fixes:" not in msg or dynamic_shapes is None:
        return []
    try:
        refined = refine_dynamic_shapes_from_suggested_fixes(msg, dynamic_shapes)
    except Exception:
        return []
    changes: dict[str, Change] = {}
    for old, new in _pairs(dynamic_shapes, refined):
        name = getattr(old, "__name__", None)
        if name is None or name in changes or hasattr(old, "root") or new is None:
            continue
        if isinstance(new, int):
            changes[name] = Change(name, ChangeKind.STATIC, value=str(new))
        elif getattr(new, "__name__", None) != name:
            changes[name] = Change(name, ChangeKind.SUBSTITUTE, value=new.__name__)
        elif (new.min, new.max) != (old.min, old.max):
            changes[name] = _tightened(name, old, new)
    roots = {d.__name__: d for d, _ in _pairs(dynamic_shapes, refined) if not hasattr(d, "root")}
    out: dict[str, Change] = {}
    for change in (_rooted_where_declared(c, roots) for c in changes.values()):
        if change.dim not in out or change.kind is ChangeKind.SUBSTITUTE:  # a relation implies the range torch also cut
            out[change.dim] = change
    return list(out.values())


_OFFSET = re.compile(r"(\w+)(?: ([-+]) (\d+))?")


def _rooted_where_declared(change: Change, roots: dict[str, Any]) -> Change:
    """torch relates two dims as ``dx = dz + 3`` whichever the user gave bounds: the one with
    more declared bounds stays the root (``dz = dx - 3``, keeping ``dx >= 5``)."""
    m = _OFFSET.fullmatch(change.value) if change.kind is ChangeKind.SUBSTITUTE else None
    if m is None or m[1] not in roots or change.dim not in roots:
        return change
    if bounds_declared(roots[change.dim]) <= bounds_declared(roots[m[1]]):
        return change
    b = int(m[3] or 0) * (1 if m[2] == "+" else -1)
    value = change.dim if b == 0 else f"{change.dim} {'-' if b > 0 else '+'} {abs(b)}"
    return Change(m[1], ChangeKind.SUBSTITUTE, value=value)


def _tightened(name: str, old: Any, new: Any) -> Change:
    """Suggestions only ever tighten; a bound the suggestion leaves out stays the user's."""
    lo = new.min if finite(new.min) and new.min > old.min else None
    hi = new.max if finite(new.max) and (not finite(old.max) or new.max < old.max) else None
    return Change(name, ChangeKind.BOUNDS, min=lo, max=hi)


def _pairs(old: Any, new: Any) -> Iterator[tuple[Any, Any]]:
    """(old, new) leaves of two dynamic_shapes structures: a Dim against an int, a Dim or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            yield from _pairs(old[k], new.get(k))
    elif isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        for a, b in zip(old, new):
            yield from _pairs(a, b)
    elif is_dim(old):
        yield old, new
