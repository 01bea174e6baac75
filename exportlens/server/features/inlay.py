"""Inlay hints: the symbolic shape at the end of each assignment in an exported forward, and
after it what a line that constrains a dynamic dim requires (``guard_lines``)."""

from __future__ import annotations

from lsprotocol import types

from ...exporter.core.sources import relative
from ..remap import lines_now
from ..session import Session
from ..snapshots import DocumentSnapshot
from .guard_lines import guard_hints
from .hover import assigned, label


def inlay_hints(session: Session, doc: DocumentSnapshot, first: int, last: int) -> list[types.InlayHint]:
    """Hints for 1-based lines ``first..last`` of the document: each line's shape (inlayHints), then
    what it requires of a dynamic dim (guardHints); two settings, as pyright has one per kind of hint."""
    shapes = shape_hints(session, doc, first, last) if session.settings.inlay_hints else []
    guards = guard_hints(session, doc, first, last) if session.settings.guard_hints else []
    return sorted(shapes + guards, key=lambda h: h.position.line)  # stable: a line's shape before its guards


def shape_hints(session: Session, doc: DocumentSnapshot, first: int, last: int) -> list[types.InlayHint]:
    """The symbolic shape at the end of each assignment on lines ``first..last``."""
    root = session.root_of(doc.path)
    rel, lines = relative(root, doc.path), doc.lines
    hints: list[types.InlayHint] = []
    seen: set[int] = set()
    for (r, _), result in session.results.items():
        summary = result.report.summary
        if r != root or summary is None:
            continue
        now = lines_now(result.texts.get(doc.path), doc.text)  # the export's lines, carried through edits since
        for shapes in summary.line_shapes:
            line = now(shapes.line) if shapes.path == rel and shapes.shapes else None
            if line is None or not (first <= line <= last) or line in seen:
                continue
            code = lines.line(line - 1)
            target = assigned(code)
            if target is None:
                continue
            seen.add(line)
            hints.append(
                types.InlayHint(
                    position=lines.position(line, len(code.rstrip()) + 1),
                    label=label(shapes.shapes[-1], target),
                    kind=types.InlayHintKind.Type,
                    padding_left=True,
                    tooltip=f"shape in your Dim names ({result.report.target})",
                )
            )
    return hints
