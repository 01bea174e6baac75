"""pyproject.toml's text read two ways (no torch): its values, by the standard library's
parser (``values``: far quicker than tomlkit, which builds a document to keep every byte),
and where that refuses the text, as tomlkit reads it (``parse``), where every way it can
fail to be TOML is one exception with a place; and as a tolerant scan of
TOML's lexical structure (``Scanner``) that keeps where each key and string is written,
for a text being typed too, where tomlkit keeps no positions and refuses the whole file.

tomlkit raises ``ParseError`` (with a line and column) for most mistakes, but for a key
written twice inside a table or an inline table ``KeyAlreadyPresent``, which says neither
where nor that it is a parse error at all.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
if TYPE_CHECKING:
    from tomlkit import TOMLDocument

_KEY = re.compile(r'Key "(?P<key>.*)" already exists')


def values(text: str) -> dict[str, Any] | None:
    """The values ``text`` holds, as plain Python, read by the standard library's parser (a
    proof's plan reads a pyproject.toml of its own for each fix, beside the event loop); None
    where it refuses the text or there is none (Python 3.10): then ``parse``, so that what is
    not TOML fails with its place and message, and what only tomlkit accepts reads as before."""
    if sys.version_info >= (3, 11):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
    return None


def parse(text: str) -> TOMLDocument:
    """tomlkit's document of ``text``; ``tomlkit.exceptions.ParseError`` where it is not
    TOML, a duplicated key on the line that writes it again."""
    import tomlkit  # here: a project without a pyproject.toml never imports it
    import tomlkit.exceptions

    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError:
        raise
    except tomlkit.exceptions.TOMLKitError as e:
        line = _first_failing_line(text)
        raise tomlkit.exceptions.ParseError(
            line, _column(text.splitlines()[line - 1], str(e)), str(e).rstrip(".")
        ) from None


def _column(line: str, message: str) -> int:
    """Where on ``line`` the key tomlkit names is written (the last time: in an inline
    table the first is the one kept); 1 where it cannot be told."""
    m = _KEY.search(message)
    if m is None:
        return 1
    key = re.escape(m["key"])
    written = list(re.finditer(rf'(?<![\w-])(?:{key}|"{key}"|\'{key}\')\s*=', line))
    return written[-1].start() + 1 if written else 1


def _first_failing_line(text: str) -> int:
    """The fewest leading lines of ``text`` tomlkit refuses other than with ParseError: the
    line of the key written twice (parsing is in order, so more lines fail the same way)."""
    import tomlkit
    import tomlkit.exceptions

    lines = text.splitlines(keepends=True)
    low, high = 1, len(lines)  # ``high`` lines fail
    while low < high:
        middle = (low + high) // 2
        try:
            tomlkit.parse("".join(lines[:middle]))
            failed = False
        except tomlkit.exceptions.ParseError:
            failed = False  # cut inside a value: the duplicate, if there, comes later
        except tomlkit.exceptions.TOMLKitError:
            failed = True
        if failed:
            high = middle
        else:
            low = middle + 1
    return high


# -- the tolerant scan -------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^,}\]\n#]*")
Path_ = tuple[str | int, ...]  # a key path; an int: an array's item, or an array of tables' table


@dataclass(frozen=True)
class Token:
    """A key or a string value: its absolute key path and the offsets of its text (for a
    quoted one, inside the quotes); ``value`` is None where escapes make text and value differ."""

    path: Path_
    start: int
    end: int
    value: str | None
    is_key: bool


@dataclass(frozen=True)
class Context:
    """What is open at a cursor: ``kind`` is "header" (``text`` typed so far), "key" (``text``:
    the key's start), "string" (``text``: its content so far) or "value"; ``path`` the
    absolute key path it belongs to (without array indices)."""

    kind: str
    path: tuple[str, ...]
    text: str = ""
    start: int = 0  # offset where ``text`` starts
    in_table: bool = False  # inside an inline table (a key there follows `{` or `,`)


def _named(path: Path_) -> tuple[str, ...]:
    return tuple(p for p in path if isinstance(p, str))


class Scanner:
    """One pass over the text: its tokens, each table header's place, and, at its end, the
    context of a cursor there. Array items and arrays of tables get their index in paths."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.table: Path_ = ()  # the current [header]'s path
        self.stack: list[list] = []  # [("{" | "["), path, items so far] of open inline tables and arrays
        self.expect = "key"
        self.path: Path_ = ()  # the key path a value being read belongs to
        self.tokens: list[Token] = []
        self.headers: list[tuple[Path_, int, int]] = []  # each [header]'s path and offsets
        self.counts: dict[Path_, int] = {}  # the latest index of each array of tables
        self.open: Context | None = None  # set when the text ends inside something

    def run(self) -> Scanner:
        while self.i < len(self.text) and self.open is None:
            self.step()
        if self.open is None:
            path = self.path if self.expect == "value" else self.here
            self.open = Context(self.expect, _named(path), start=self.i, in_table=self._in_table)
        return self

    @property
    def here(self) -> Path_:
        if not self.stack:
            return self.table
        kind, path, items = self.stack[-1]
        return path if kind == "{" else (*path, items)

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
            if self.stack:
                self.stack[-1][2] += 1
            self.expect = "key" if self._in_table else "value"
            self.path = self.here
        elif c in "}]" and self.stack:
            self.stack.pop()
            self.expect = "after"

    def header(self) -> None:
        start, double = self.i, self.text.startswith("[[", self.i)
        self.i += 2 if double else 1
        parts: list[str] = []
        while self.i < len(self.text) and self.text[self.i] not in "]\n":
            c = self.text[self.i]
            if c in " \t.":
                self.i += 1
                continue
            at = self.i
            if not (c in "\"'" or _BARE.match(c)):
                self.i += 1  # not TOML: skip it
                continue
            part = self.key_part(self._resolve(parts), [])
            if part is None:
                self.open = Context("header", tuple(parts), self.text[at:], at)
                return
            parts.append(part)
        if self.i >= len(self.text):  # the text ends inside the header: `[tool.exportlens.modules.`
            self.open = Context("header", tuple(parts), "", self.i)
            return
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end
        self.table = self._resolve(parts)
        if double and parts:
            self.counts[self.table] = self.counts.get(self.table, -1) + 1
            self.table = (*self.table, self.counts[self.table])
        self.headers.append((self.table, start, self.i))
        self.expect = "key"

    def _resolve(self, parts: list[str]) -> Path_:
        """A header's parts with the latest index after each array of tables they pass."""
        out: list[str | int] = []
        for part in parts:
            if tuple(out) in self.counts:
                out.append(self.counts[tuple(out)])
            out.append(part)
        return tuple(out)

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
                part = self.key_part(base, parts)
                if part is None:
                    path = _named(base) + tuple(parts)
                    self.open = Context("key", path, self.text[start:], start, self._in_table)
                    return
                parts.append(part)
            else:  # `}`, `]`, `,`, a newline, a comment or junk: no key here
                self.i += 0 if c in ",}]\n#" else 1
                self.expect = "after"
                return
        kind = "after" if parts else "key"  # `dims ` then the cursor: no key to offer
        self.open = Context(kind, _named(base) + tuple(parts), "", self.i, self._in_table)

    def key_part(self, base: Path_, parts: list[str]) -> str | None:
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
        self.tokens.append(Token((*base, *parts, value or ""), start, end, value, True))
        return value or ""

    def value(self) -> None:
        c = self.text[self.i]
        if c in "\"'":
            start = self.i
            found = self.string(c)
            if found is None:
                quote = 3 if self.text.startswith(c * 3, start) else 1
                text = self.text[start + quote :]
                self.open = Context("string", _named(self.path), text, start + quote, self._in_table)
                return
            self.tokens.append(Token(self.path, found[0], found[1], found[2], False))
            self.expect = "after"
        elif c in "{[":
            self.i += 1
            self.stack.append([c, self.path, 0])
            self.path = self.here
            self.expect = "key" if c == "{" else "value"
        elif c in ",}]":
            self.after(c)
        else:
            m = _SCALAR.match(self.text, self.i)
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


def context_at(text: str, offset: int) -> Context:
    """What the text before ``offset`` leaves open there."""
    return Scanner(text[:offset]).run().open or Context("key", ())
