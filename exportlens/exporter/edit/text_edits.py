"""Text edits that keep the user's layout: the one minimal ``Edit`` between a file's old and
new text, and applying edits (no torch). The edits themselves: ``spec_tables`` (pyproject
tables) and ``python_edits`` (the user's Python).
"""

from __future__ import annotations

from ..core.report import Edit


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def edit_between(path: str, old: str, new: str) -> Edit | None:
    """The single smallest replacement that turns ``old`` into ``new``."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    line, column = _position(old, start)
    end_line, end_column = _position(old, end_old)
    return Edit(path, line, column, end_line, end_column, new[start:end_new])


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply edits on one file (positions refer to the original text)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, column: int) -> int:
        return starts[min(line, len(starts)) - 1] + column - 1

    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        text = text[: offset(e.line, e.column)] + e.new_text + text[offset(e.end_line, e.end_column) :]
    return text
