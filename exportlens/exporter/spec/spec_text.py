"""Where things are written in pyproject.toml's module tables: each table's target string,
its keys, its shape strings and the dim names inside them, with offsets (no torch).

tomlkit keeps no positions, and a file being typed rarely parses, so this is a tolerant
scan of TOML's lexical structure: headers, keys (bare, quoted, dotted), strings (basic,
literal, multi-line), inline tables and arrays. ``scan`` reads a whole text;
``context_at`` says what the text before a cursor leaves open (a header, a key, a string).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .shapes import looks_like_shape

MODULES = ("tool", "exportlens", "modules")
VARIANTS = "variants"
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# A scope is one module table: (target, None), or its n-th [[...variants]] table: (target, n)
ScopeKey = tuple[str, int | None]


@dataclass(frozen=True)
class Token:
    """A key or a string value: its absolute key path and the offsets of its text (for a
    quoted one, inside the quotes); ``value`` is None where escapes make text and value differ."""

    path: tuple[str, ...]
    start: int
    end: int
    value: str | None
    is_key: bool


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
    header: Token  # the target string in its header
    tokens: list[Token] = field(default_factory=list)

    def rel(self, token: Token) -> tuple[str, ...]:
        """The token's path inside this module table."""
        return token.path[len(MODULES) + (2 if self.key[1] is not None else 1) :]

    def shapes(self) -> list[tuple[str, Token]]:
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


def _names_in_shape(name: str, token: Token) -> list[DimUse]:
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


@dataclass(frozen=True)
class Context:
    """What is open at a cursor: ``kind`` is "header" (``text`` typed so far), "key" (``text``:
    the key's start), "string" (``text``: its content so far) or "value"; ``path`` the
    absolute key path it belongs to."""

    kind: str
    path: tuple[str, ...]
    text: str = ""
    start: int = 0  # offset where ``text`` starts
    in_table: bool = False  # inside an inline table (a key there follows `{` or `,`)


class _Scan:
    """One pass over the text; the state left at its end is the context of a cursor there."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.table: tuple[str, ...] = ()  # the current [header]'s path
        self.stack: list[tuple[str, tuple[str, ...]]] = []  # ("{" | "[", path) of open inline tables and arrays
        self.expect = "key"
        self.path: tuple[str, ...] = ()  # the key path a value being read belongs to
        self.tokens: list[Token] = []
        self.arrays: list[int] = []  # the last key token of each [[array table]] header
        self.open: Context | None = None  # set when the text ends inside something

    def run(self) -> _Scan:
        while self.i < len(self.text) and self.open is None:
            self.step()
        if self.open is None:
            path = self.path if self.expect == "value" else self.here
            self.open = Context(self.expect, path, start=self.i, in_table=self._in_table)
        return self

    @property
    def here(self) -> tuple[str, ...]:
        return self.stack[-1][1] if self.stack else self.table

    @property
    def _in_table(self) -> bool:
        return bool(self.stack) and self.stack[-1][0] == "{"

    def step(self) -> None:
        c = self.text[self.i]
        if c == "\n":
            self.i += 1
            if not self.stack:
                self.expect = "key"
        elif c in " \t\r":
            self.i += 1
        elif c == "#":
            end = self.text.find("\n", self.i)
            self.i = len(self.text) if end < 0 else end
        elif c == "[" and self.expect == "key" and not self.stack:
            self.header()
        elif self.expect == "key":
            self.key()
        elif self.expect == "value":
            self.value()
        else:
            self.after(c)

    def after(self, c: str) -> None:
        self.i += 1
        if c == ",":
            self.expect = "key" if self._in_table else "value"
            self.path = self.here
        elif c in "}]" and self.stack:
            self.stack.pop()
            self.expect = "after"

    def header(self) -> None:
        double = self.text.startswith("[[", self.i)
        self.i += 2 if double else 1
        parts: list[str] = []
        while self.i < len(self.text) and self.text[self.i] not in "]\n":
            c = self.text[self.i]
            if c in " \t.":
                self.i += 1
                continue
            start = self.i
            if not (c in "\"'" or _BARE.match(c)):
                self.i += 1  # not TOML: skip it
                continue
            part = self.key_part(parts, ())
            if part is None:
                self.open = Context("header", tuple(parts), self.text[start:], start)
                return
            parts.append(part)
        if self.i >= len(self.text):  # the text ends inside the header: `[tool.exportlens.modules.`
            self.open = Context("header", tuple(parts), "", self.i)
            return
        self.i = self.text.find("\n", self.i) if "\n" in self.text[self.i :] else len(self.text)
        self.table = tuple(parts)
        if double:
            self.arrays.append(len(self.tokens) - 1)  # its last key token
        self.expect = "key"

    def key(self) -> None:
        """A key, dotted or not, up to its ``=``."""
        parts: list[str] = []
        base = self.here
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t.":
                self.i += 1
            elif c == "=":
                self.i += 1
                self.path, self.expect = base + tuple(parts), "value"
                return
            elif c in "\"'" or _BARE.match(c):
                start = self.i
                part = self.key_part(parts, base)
                if part is None:
                    self.open = Context("key", base + tuple(parts), self.text[start:], start, self._in_table)
                    return
                parts.append(part)
            else:  # `}`, `]`, `,`, a newline, a comment or junk: no key here
                self.i += 0 if c in ",}]\n#" else 1
                self.expect = "after"
                return
        kind = "after" if parts else "key"  # `dims ` then the cursor: no key to offer
        self.open = Context(kind, base + tuple(parts), "", self.i, self._in_table)

    def key_part(self, parts: list[str], base: tuple[str, ...]) -> str | None:
        """One bare or quoted key component, recorded as a token; None where the text ends in it."""
        c = self.text[self.i]
        if c in "\"'":
            found = self.string(c)
            if found is None:
                return None
            start, end, value = found
        else:
            m = _BARE.match(self.text, self.i)
            assert m is not None  # callers check the first character
            start, end, value = m.start(), m.end(), m.group()
            self.i = end
            if end == len(self.text):
                return None
        self.tokens.append(Token(base + (*parts, value or ""), start, end, value, True))
        return value or ""

    def value(self) -> None:
        c = self.text[self.i]
        if c in "\"'":
            start = self.i
            found = self.string(c)
            if found is None:
                quote = 3 if self.text.startswith(c * 3, start) else 1
                self.open = Context("string", self.path, self.text[start + quote :], start + quote, self._in_table)
                return
            self.tokens.append(Token(self.path, found[0], found[1], found[2], False))
            self.expect = "after"
        elif c in "{[":
            self.i += 1
            self.stack.append((c, self.path))
            self.expect = "key" if c == "{" else "value"
        elif c in ",}]":
            self.after(c)
        else:
            m = re.compile(r"[^,}\]\n#]*").match(self.text, self.i)
            self.i = m.end() if m and m.end() > self.i else self.i + 1
            self.expect = "after"

    def string(self, quote: str) -> tuple[int, int, str | None] | None:
        """A quoted string at the cursor: its content's offsets and value (None: escapes)."""
        triple = self.text.startswith(quote * 3, self.i)
        delim = quote * 3 if triple else quote
        start = self.i + len(delim)
        j = start
        while True:
            if j >= len(self.text) or (not triple and self.text[j] == "\n"):
                self.i = j
                return None
            if quote == '"' and self.text[j] == "\\":
                j += 2
                continue
            if self.text.startswith(delim, j):
                break
            j += 1
        self.i = j + len(delim)
        raw = self.text[start:j]
        return start, j, None if quote == '"' and "\\" in raw else raw


def module_of(path: tuple[str, ...]) -> str | None:
    """The target of a key path inside ``[tool.exportlens.modules."<target>"]``."""
    return path[len(MODULES)] if len(path) > len(MODULES) and path[: len(MODULES)] == MODULES else None


def scan(text: str) -> list[Scope]:
    """Every module table of the text, with its tokens."""
    s = _Scan(text).run()
    arrays = set(s.arrays)
    scopes: dict[ScopeKey, Scope] = {}
    variants: dict[str, int] = {}  # the index of each target's latest [[...variants]] table
    headers: dict[str, Token] = {}  # each target's first target string
    n = len(MODULES)
    for i, t in enumerate(s.tokens):
        target = module_of(t.path)
        if target is None:
            continue
        headers.setdefault(target, t)
        if len(t.path) == n + 1:
            scopes.setdefault((target, None), Scope((target, None), headers[target]))
            continue
        if i in arrays and t.path[n + 1 :] == (VARIANTS,):
            variants[target] = variants.get(target, -1) + 1
        key: ScopeKey = (target, max(variants.get(target, 0), 0)) if t.path[n + 1] == VARIANTS else (target, None)
        scopes.setdefault(key, Scope(key, headers[target])).tokens.append(t)
    return list(scopes.values())


def context_at(text: str, offset: int) -> Context:
    """What the text before ``offset`` leaves open there."""
    return _Scan(text[:offset]).run().open or Context("key", ())


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
