"""Where things are written in pyproject.toml's module tables: each table's target string,
its keys, its shape strings and the dim names inside them (no torch).

Read from the ``pyproject`` tree (a text being typed too); ``context_at`` says what the
text before a cursor leaves open (a header, a key, a string). Offsets, not spans: the
editor's features turn a cursor into one (``SpecDoc.offset``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .pyproject import MODULES, VARIANTS, Node, read
from .shapes import looks_like_shape
from .toml_text import Context, Path_, context_at

__all__ = ["MODULES", "VARIANTS", "Context", "DimUse", "Scope", "context_at", "family", "module_of", "scan"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# A scope is one module table: (target, None), or its n-th variant's table: (target, n)
ScopeKey = tuple[str, int | None]


@dataclass(frozen=True)
class DimUse:
    """A dim name written in a shape string, or as a key of ``dims``."""

    name: str
    start: int
    end: int
    input: str | None  # the input's path ("ids", "pair[1]"); None: the dims key
    axis: int | None = None
    size: str | None = None  # the whole size it is part of ("2*seq")


@dataclass
class Scope:
    key: ScopeKey
    header: Node  # the target string in its header
    tokens: list[Node] = field(default_factory=list)

    def rel(self, token: Node) -> tuple[str, ...]:
        """The token's path inside this module table (without array indices)."""
        skip = len(MODULES) + (3 if self.key[1] is not None else 1)
        return tuple(p for p in token.path[skip:] if isinstance(p, str))

    def shapes(self) -> list[tuple[str, Node]]:
        """Each shape string under ``inputs``, with the input's name."""
        out = []
        for t in self.tokens:
            rel = self.rel(t)
            if (
                not t.is_key
                and t.value is not None
                and len(rel) >= 2
                and rel[0] == "inputs"
                and looks_like_shape(t.value)
            ):
                out.append((".".join(p for p in rel[1:] if p != "shape"), t))
        return out

    def dim_uses(self) -> list[DimUse]:
        """Every dim name written in this table: in shape strings, and as ``dims`` keys."""
        out = [use for name, t in self.shapes() for use in _names_in_shape(name, t)]
        for t in self.tokens:
            rel = self.rel(t)
            if t.is_key and len(rel) == 2 and rel[0] == "dims" and t.value is not None:
                out.append(DimUse(t.value, t.start, t.end, None))
        return out

    def keys(self, prefix: tuple[str, ...]) -> set[str]:
        """The keys written directly under ``prefix`` in this table."""
        return {self.rel(t)[-1] for t in self.tokens if t.is_key and self.rel(t)[:-1] == prefix}


def _names_in_shape(name: str, token: Node) -> list[DimUse]:
    text = token.value or ""
    open_at = text.find("[")
    body_end = text.find("]", open_at) if "]" in text[open_at:] else len(text)
    out, axis, size_start = [], 0, open_at + 1
    for i in range(open_at + 1, body_end + 1):
        if i == body_end or text[i] == ",":
            size = text[size_start:i]
            for m in _NAME.finditer(size):
                at = token.start + size_start + m.start()
                out.append(DimUse(m.group(), at, at + len(m.group()), name, axis, size.strip()))
            axis, size_start = axis + 1, i + 1
    return out


def module_of(path: Path_) -> str | None:
    """The target of a key path inside ``[tool.exportlens.modules."<target>"]``."""
    n = len(MODULES)
    target = path[n] if len(path) > n and path[:n] == MODULES else None
    return target if isinstance(target, str) else None


def scan(text: str) -> list[Scope]:
    """Every module table of the text, with its tokens."""
    scopes: dict[ScopeKey, Scope] = {}
    met: dict[str, int] = {}  # how many variants of each target were met: a bare `variants` key opens the next
    headers: dict[str, Node] = {}  # each target's first target string
    n = len(MODULES)
    for t in read(text).nodes:
        target = module_of(t.path)
        if target is None:
            continue
        headers.setdefault(target, t)
        if len(t.path) == n + 1:
            scopes.setdefault((target, None), Scope((target, None), headers[target]))
            continue
        key: ScopeKey = (target, None)
        if t.path[n + 1] == VARIANTS:
            index = t.path[n + 2] if len(t.path) > n + 2 else None
            if isinstance(index, int):
                met[target] = max(met.get(target, 0), index + 1)
            key = (target, index if isinstance(index, int) else met.get(target, 0))
        scopes.setdefault(key, Scope(key, headers[target])).tokens.append(t)
    return list(scopes.values())


def scope_at(scopes: list[Scope], offset: int) -> Scope | None:
    """The module table whose tokens surround ``offset`` (the last one starting before it)."""
    best: tuple[int, Scope] | None = None
    for scope in scopes:
        starts = [t.start for t in [scope.header, *scope.tokens] if t.start <= offset]
        if starts and (best is None or max(starts) > best[0]):
            best = (max(starts), scope)
    return best[1] if best else None


def family(scopes: list[Scope], target: str) -> list[Scope]:
    """A class's table and its variants' tables: a variant merges the class's ``inputs``
    and ``dims`` with its own, so a dim name is one name across all of them."""
    return [s for s in scopes if s.key[0] == target]


def uses(scopes: list[Scope]) -> list[DimUse]:
    return [u for s in scopes for u in s.dim_uses()]


def use_at(scopes: list[Scope], offset: int) -> DimUse | None:
    """The dim name under ``offset`` (inside it or just after it)."""
    return next((u for u in uses(scopes) if u.start <= offset <= u.end), None)
