"""The one place that converts positions: exportlens's 1-based lines and code-point
columns to LSP's 0-based lines and columns in the negotiated position encoding
(UTF-8, UTF-16 or UTF-32), counted by pygls's ``PositionCodec``."""

from __future__ import annotations

from functools import cache

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

UTF16 = types.PositionEncodingKind.Utf16  # LSP's default, where the client offers no other
BOM = "\ufeff"


@cache
def _codec(encoding: str) -> PositionCodec:
    return PositionCodec(encoding)  # an unknown encoding counts as UTF-16, as pygls does


class Lines:
    """A document's lines, for column conversion in one position encoding. ``bom``: the
    client's text starts with a byte-order mark that ``text`` leaves out (it is no code); the
    client counts it, so a column of the first line is one character further there."""

    def __init__(self, text: str, encoding: str = UTF16, *, bom: bool = False) -> None:
        self.lines = text.splitlines() or [""]
        self.encoding = encoding
        self._bom = _codec(encoding).client_num_units(BOM) if bom else 0

    def line(self, line0: int) -> str:
        return self.lines[line0] if 0 <= line0 < len(self.lines) else ""

    def position(self, line: int, column: int | None) -> types.Position:
        """1-based line and code-point column (None: end of the line) -> LSP Position."""
        line0 = max(line - 1, 0)
        text = self.line(line0)
        col = len(text) if column is None else min(max(column - 1, 0), len(text))
        return types.Position(
            line0, _codec(self.encoding).client_num_units(text[:col]) + (self._bom if line0 == 0 else 0)
        )

    def column(self, position: types.Position) -> int:
        """An LSP position's 0-based code-point column in its line."""
        if position.line == 0 and self._bom:
            position = types.Position(0, max(position.character - self._bom, 0))
        return _codec(self.encoding).position_from_client_units(self.lines, position).character

    def range(self, line: int, column: int, end_line: int | None, end_column: int | None) -> types.Range:
        """A finding's span; with no end, from the column to the end of its line's code."""
        if end_line is not None:
            return types.Range(self.position(line, column), self.position(end_line, end_column))
        text = self.line(line - 1)
        stripped = len(text.rstrip())
        first = len(text) - len(text.lstrip())
        column = column if column > 1 else first + 1  # column 1: the line's code, not its indent
        return types.Range(self.position(line, column), self.position(line, max(stripped + 1, column)))
