"""The one place that converts positions: exportlens's 1-based lines and code-point
columns to LSP's 0-based lines and UTF-16 columns, and back."""

from __future__ import annotations

from lsprotocol import types


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Lines:
    """A document's lines, for column conversion."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines() or [""]

    def line(self, line0: int) -> str:
        return self.lines[line0] if 0 <= line0 < len(self.lines) else ""

    def position(self, line: int, column: int | None, *, utf16: bool = True) -> types.Position:
        """1-based line and code-point column (None: end of the line) -> LSP Position."""
        line0 = max(line - 1, 0)
        text = self.line(line0)
        col = len(text) if column is None else min(max(column - 1, 0), len(text))
        return types.Position(line0, _utf16_units(text[:col]) if utf16 else col)

    def range(self, line: int, column: int, end_line: int | None, end_column: int | None, *, utf16: bool = True) -> types.Range:
        """A finding's span; with no end, from the column to the end of its line's code."""
        start = self.position(line, column, utf16=utf16)
        if end_line is None:
            text = self.line(line - 1)
            stripped = len(text.rstrip())
            first = len(text) - len(text.lstrip())
            column = column if column > 1 else first + 1  # column 1: the line's code, not its indent
            start = self.position(line, column, utf16=utf16)
            return types.Range(start, self.position(line, max(stripped + 1, column), utf16=utf16))
        return types.Range(start, self.position(end_line, end_column, utf16=utf16))

    def column(self, position: types.Position, *, utf16: bool = True) -> int:
        """LSP Position -> 1-based code-point column on its line."""
        text = self.line(position.line)
        if not utf16:
            return position.character + 1
        units = 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return i + 1
            units += 2 if ord(ch) > 0xFFFF else 1
        return len(text) + 1
