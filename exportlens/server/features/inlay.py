"""Inlay hints: the symbolic shape at the end of each assignment in an exported forward."""

from __future__ import annotations

from lsprotocol import types

from ..remap import lines_now
from ..session import Session
from ..snapshots import DocumentSnapshot
from .diagnostics import relative
from .hover import assigned, label


def inlay_hints(session: Session, doc: DocumentSnapshot, first: int, last: int) -> list[types.InlayHint]:
    """Hints for 1-based lines ``first..last`` of the document (none with inlayHints off)."""
    if not session.settings.inlay_hints:
        return []
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
    return sorted(hints, key=lambda h: h.position.line)
