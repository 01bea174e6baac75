"""Positions found in one text, carried into a later text of the same file.

An export reports lines of the text it imported; by the time it lands, or is published
again, the user may have typed. A finding is moved by the lines inserted or deleted above
it, and dropped where its own lines changed: the next export speaks for those. A squiggle
is the exception (``follow``): we export on save, so until the next verdict it stays on the
saved verdict, on the lines that replaced its own, as the CodeLens and the status bar do."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from lsprotocol import types

from ..exporter.core.report import Finding
from .snapshots import DocumentSnapshot


@lru_cache(maxsize=64)
def line_map(old: str, new: str) -> dict[int, int]:
    """1-based lines of ``old`` that ``new`` still has unchanged -> their lines in ``new``."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return {i + k + 1: j + k + 1 for i, j, size in matcher.get_matching_blocks() for k in range(size)}


def lines_now(result_text: str | None, now: str) -> Callable[[int], int | None]:
    """A line of the text an export read -> its line now (None: edited since)."""
    if result_text is None or result_text == now:
        return lambda line: line
    return line_map(result_text, now).get


def remap(finding: Finding, old: str, new: str) -> Finding | None:
    """``finding`` (in ``old``) in ``new``; None where a line it covers was edited."""
    if old == new:
        return finding
    now = lines_now(old, new)
    start = now(finding.line)
    end = now(finding.end_line) if finding.end_line is not None else start
    if start is None or end is None or end - start != (finding.end_line or finding.line) - finding.line:
        return None
    # its fixes stay as made: their edits name the version they were made for, which the editor checks
    return replace(finding, line=start, end_line=end if finding.end_line is not None else None)


def range_now(finding: Finding, then: str | None, now: DocumentSnapshot) -> types.Range | None:
    """``finding``'s range in the document as it is now, in the client's position encoding:
    ``then`` is the text the export read (None: the text of now); None where a line it covers
    was edited since."""
    moved = finding if then is None else remap(finding, then, now.text)
    return None if moved is None else now.lines.range(moved.line, moved.column, moved.end_line, moved.end_column)


@lru_cache(maxsize=64)
def _nearest(old: str, new: str) -> tuple[int, ...]:
    """Each 1-based line of ``old`` -> a line of ``new``: an unchanged line where it moved, an
    edited one onto the lines that replaced it (their last where fewer), a deleted one onto the
    line after the gap (index 0 unused)."""
    a, b = old.splitlines(), new.splitlines()
    out = [0] * (len(a) + 1)
    for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for i in range(i1, i2):
            out[i + 1] = min(j1 + min(i - i1, max(j2 - j1 - 1, 0)) + 1, max(len(b), 1))
    return tuple(out)


def follow(finding: Finding, old: str, new: str) -> Finding:
    """``finding`` in ``new``, kept where its own lines were edited: on the whole code of the
    line that replaced its first (its columns were of a text that is gone)."""
    moved = remap(finding, old, new)
    if moved is not None:
        return moved
    lines = _nearest(old, new)
    line = lines[finding.line] if 0 < finding.line < len(lines) else max(len(new.splitlines()), 1)
    return replace(finding, line=line, column=1, end_line=None, end_column=None)
