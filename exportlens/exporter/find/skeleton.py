"""A file's text with function bodies blanked, so that ``ast`` parses only what a module's
outline needs: imports, class statements and their methods' signatures.

Most of a model file is function bodies, and parsing them is most of the cost. A body is
the lines after its ``def`` up to the first line indented no deeper than the ``def``;
such a line inside a triple-quoted string or brackets does not end it, which the counts
of quotes and brackets before it tell. A quote inside another string can fool the
counts, so a body that passes over such a line is confirmed by Python's parser; where
the counts cannot tell at all (more closed than opened, a line continued by a
backslash) the body is kept as it is. Blanked
lines become empty lines, so every line and column after them stays where it was.
What an outline reports of a body, its first and last lines and where it ends, is kept
beside the text for each blanked function.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from .syntax import UNPARSABLE

# ``def`` first, then what precedes it on its line: a pattern that starts with a literal is
# searched for at C speed, one that starts with ``^`` tries every position (eight times slower)
_DEF = re.compile(r"def[ \t]")
_DEF_PREFIX = re.compile(r"([ ]*)(?:async[ \t]+)?")  # all that may precede it: its indentation
_COLON_END = re.compile(r":[ \t]*(?:#.*)?$")  # a colon that ends its line
_STATEMENT_LINE = re.compile(r"^[ \t]*[^ \t\r\n#]", re.MULTILINE)  # neither blank nor only a comment
_HEADER_LINES = 200  # a signature longer than this is kept, not searched to its end


@dataclass(frozen=True)
class Skeleton:
    text: str
    # a blanked function's def line: its body's first and last lines, and the column (0-based,
    # in characters) where its last statement ends
    bodies: Mapping[int, tuple[int, int, int]]


def skeleton(text: str) -> Skeleton:
    """``text`` with the bodies of its functions blanked, lines kept."""
    pieces: list[str] = []
    bodies: dict[int, tuple[int, int, int]] = {}
    done, line, counted = 0, 1, 0  # ``line``: the line of offset ``counted``
    for at, start, end, indent in _bodies(text):
        pieces += [text[done:start], " " * (indent + 1), "...", "\n" * text.count("\n", start, end)]
        done = end
        line, counted = line + text.count("\n", counted, at), at
        bodies[line] = _statements(text, start, end, line + text.count("\n", at, start))
    return Skeleton("".join(pieces) + text[done:], bodies) if pieces else Skeleton(text, {})


def _statements(text: str, start: int, end: int, line: int) -> tuple[int, int, int]:
    """Where the statements of ``text[start:end]`` (which starts at ``line``) are: the lines of the
    first and last lines that are neither blank nor only a comment, and where the last ends."""
    first = _STATEMENT_LINE.search(text, start, end)
    if first is None:
        return line, line, 0
    pos, last_start = end, first.start()
    while pos > first.end():
        newline = text.rfind("\n", start, pos - 1)
        line_start = max(newline + 1, first.start())
        stripped = text[line_start:pos].strip()
        if stripped and not stripped.startswith("#"):
            last_start = line_start
            break
        pos = line_start
    line_end = text.find("\n", last_start)
    last_line = text[last_start : line_end if line_end >= 0 else len(text)]
    first_line = line + text.count("\n", start, first.start())
    return first_line, line + text.count("\n", start, last_start), _code_end(last_line)


def _code_end(line: str) -> int:
    """Where a line's code ends: before its comment, if it has one."""
    code = _CODE.match(line).group() if "#" in line else line  # type: ignore[union-attr]  # it matches "" at least
    return len(code.rstrip())


_CODE = re.compile(r"""(?:[^#'"]|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")*""")  # up to a ``#`` outside a string


def _bodies(text: str) -> Iterator[tuple[int, int, int, int]]:
    """Each function body to blank: its def's offset, the body's offsets, the def's indentation;
    in order, none inside another."""
    after = 0
    for m in _DEF.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        prefix = _DEF_PREFIX.fullmatch(text, line_start, m.start()) if line_start >= after else None
        if prefix is None:
            continue
        indent = len(prefix.group(1))
        start = _header_end(text, m.end())
        end = _body_end(text, start, indent, line_start) if start is not None else None
        if start is not None and end is not None and end > start:
            yield line_start, start, end, indent
            after = end


def _header_end(text: str, pos: int) -> int | None:
    """Where the body starts: after the line whose colon closes the signature (None for a
    one-line def, or one that cannot be read from counts)."""
    at = pos
    for _ in range(_HEADER_LINES):
        newline = text.find("\n", at)
        if newline < 0:
            return None
        if _open(text, pos, newline) == 0:
            line = text[text.rfind("\n", 0, newline) + 1 : newline].rstrip("\r")
            return newline + 1 if _COLON_END.search(line) and not line.endswith("\\") else None
        at = newline + 1
    return None


def _body_end(text: str, start: int, indent: int, def_start: int) -> int | None:
    at = start
    while True:
        found = _dedent(indent).search(text, at)
        end = found.start() if found else len(text)
        opened = _open(text, start, end)
        if opened < 0 or _continued(text, start, end):
            return None
        if opened == 0 and not _odd(text, start, end, '"""') and not _odd(text, start, end, "'''"):
            # a line passed over (inside a string or brackets, by the counts): the counts may
            # be fooled by a quote inside a string, so let Python's parser confirm the def ends here
            return end if at == start or _one_def(text, def_start, end, indent) else None
        if found is None:
            return None
        at = text.find("\n", found.start()) + 1 or len(text)


def _one_def(text: str, def_start: int, end: int, indent: int) -> bool:
    """``text[def_start:end]`` is exactly one function definition."""
    line_start = text.rfind("\n", 0, def_start) + 1
    source = ("if 1:\n" if indent else "") + text[line_start:end]
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return False
    if len(tree.body) != 1:
        return False
    only = tree.body[0]  # under ``if 1:`` where the text was indented: the block is that if's
    return not indent or (isinstance(only, ast.If) and len(only.body) == 1)


def _continued(text: str, start: int, end: int) -> bool:
    """The body's last line ends with a backslash: the line after it continues it."""
    i = end - 1
    while i > start and text[i] in " \t\r\n":
        i -= 1
    return text[i] == "\\"


@cache
def _dedent(indent: int) -> re.Pattern[str]:
    """A line that starts a statement indented at most ``indent`` spaces."""
    return re.compile(rf"^[ ]{{0,{indent}}}(?=[^ \t\r\n#])", re.MULTILINE)


def _odd(text: str, start: int, end: int, quote: str) -> bool:
    return text.count(quote, start, end) % 2 == 1


def _open(text: str, start: int, end: int) -> int:
    """How many brackets ``text[start:end]`` leaves open (below 0: it closes more than it opens)."""
    parens = text.count("(", start, end) - text.count(")", start, end)
    squares = text.count("[", start, end) - text.count("]", start, end)
    braces = text.count("{", start, end) - text.count("}", start, end)
    least = min(parens, squares, braces)
    return least if least < 0 else max(parens, squares, braces)
