"""pyproject.toml's text as tomlkit reads it, where every way it can fail to be TOML is one
exception with a place (no torch).

tomlkit raises ``ParseError`` (with a line and column) for most mistakes, but for a key
written twice inside a table or an inline table ``KeyAlreadyPresent``, which says neither
where nor that it is a parse error at all.
"""

from __future__ import annotations

import re

import tomlkit
import tomlkit.exceptions
from tomlkit import TOMLDocument

_KEY = re.compile(r'Key "(?P<key>.*)" already exists')


def parse(text: str) -> TOMLDocument:
    """tomlkit's document of ``text``; ``tomlkit.exceptions.ParseError`` where it is not
    TOML, a duplicated key on the line that writes it again."""
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
