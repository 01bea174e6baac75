"""Inlay hints: the symbolic shape at the end of each assignment in an exported forward."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ..positions import Lines
from ..session import Session
from .hover import assigned


def inlay_hints(session: Session, root: Path, rel: str, lines: Lines, first: int, last: int, utf16: bool = True) -> list[types.InlayHint]:
    """Hints for 1-based lines ``first..last`` of ``rel``."""
    hints: list[types.InlayHint] = []
    seen: set[int] = set()
    for (r, _), result in session.results.items():
        summary = result.report.summary
        if r != root or summary is None:
            continue
        for ls in summary.line_shapes:
            if ls.path != rel or not (first <= ls.line <= last) or ls.line in seen or not ls.shapes:
                continue
            code = lines.line(ls.line - 1)
            if assigned(code) is None:
                continue
            seen.add(ls.line)
            end = lines.position(ls.line, len(code.rstrip()) + 1, utf16=utf16)
            hints.append(
                types.InlayHint(
                    position=end,
                    label=ls.shapes[-1],
                    kind=types.InlayHintKind.Type,
                    padding_left=True,
                    tooltip=f"shape in your Dim names ({result.report.target})",
                )
            )
    return sorted(hints, key=lambda h: h.position.line)
