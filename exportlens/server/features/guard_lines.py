"""The guard record on the lines that made it: what a line's hover lists, and the
inlay hint that ends each line constraining a dynamic dim. Read from each exported module's
``Summary.guards``, carried through the edits made since its export."""

from __future__ import annotations

from lsprotocol import types

from ...exporter.core.guards import Guard, GuardKind
from ...exporter.core.sources import relative
from ..remap import lines_now
from ..session import Session
from ..snapshots import DocumentSnapshot

# what the hover says of each kind; the order is the one a line's guards are listed in
_SAID = {
    GuardKind.SPECIALIZATION: "specialized: a static size now",
    GuardKind.RELATION: "relation",
    GuardKind.RANGE: "range",
    GuardKind.RUNTIME_ASSERT: "checked when the program runs",
}
_RANK = {kind: i for i, kind in enumerate(_SAID)}
# a runtime assertion bounds a value read from data, not an input's size: hover lists it, no hint marks it
_ON_DIMS = frozenset({GuardKind.SPECIALIZATION, GuardKind.RELATION, GuardKind.RANGE})
_MATH = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("==", "="))
_HINT_MAX = 60  # characters of a hint's label: hover lists the rest
_HOVER_MAX = 12  # guards a hover lists


def guards_by_line(session: Session, doc: DocumentSnapshot) -> dict[int, list[Guard]]:
    """Each 1-based line of the document as it is now -> the guards exported programs hold
    from it, each text once: torch records a size made constant both as a guard and as the
    constant, and the constant is what the user needs to know."""
    root = session.root_of(doc.path)
    rel = relative(root, doc.path)
    out: dict[int, dict[str, Guard]] = {}
    for (r, _), result in session.results.items():
        summary = result.report.summary
        if r != root or summary is None or not summary.guards:
            continue
        now = lines_now(result.texts.get(doc.path), doc.text)  # the export's lines, carried through edits since
        for guard in summary.guards:
            line = now(guard.line) if guard.path == rel and guard.line is not None else None
            if line is None:
                continue
            kept = out.setdefault(line, {})
            if guard.text not in kept or _RANK[guard.kind] < _RANK[kept[guard.text].kind]:
                kept[guard.text] = guard
    return {line: sorted(kept.values(), key=lambda g: _RANK[g.kind]) for line, kept in out.items()}


def hover_text(guards: list[Guard]) -> str | None:
    """A line's guards as the hover lists them: ``Guards from this line: `n <= 64` (range)``."""
    if not guards:
        return None
    said = ", ".join(f"`{g.text}` ({_SAID[g.kind]})" for g in guards[:_HOVER_MAX])
    more = f", … {len(guards) - _HOVER_MAX} more" if len(guards) > _HOVER_MAX else ""
    return f"Guards from this line: {said}{more}"


def hint_label(guards: list[Guard]) -> str | None:
    """The hint for a line whose guards constrain a dynamic dim (``guard: seq ≤ 64``); None for none."""
    said = [
        _math(g.text) + (" (static)" if g.kind is GuardKind.SPECIALIZATION else "")
        for g in guards
        if g.kind in _ON_DIMS
    ]
    if not said:
        return None
    label = ("guard: " if len(said) == 1 else "guards: ") + ", ".join(said)
    return label if len(label) <= _HINT_MAX else label[: _HINT_MAX - 1] + "…"


def guard_hints(session: Session, doc: DocumentSnapshot, first: int, last: int) -> list[types.InlayHint]:
    """An inlay hint at the end of each line ``first..last`` (1-based) that constrains a dynamic dim."""
    hints = []
    for line, guards in guards_by_line(session, doc).items():
        label = hint_label(guards) if first <= line <= last else None
        if label is None:
            continue
        code = doc.lines.line(line - 1)
        hints.append(
            types.InlayHint(
                position=doc.lines.position(line, len(code.rstrip()) + 1),
                label=label,
                padding_left=True,
                tooltip="what this line requires of the inputs' sizes in the exported program; hover the line for all",
            )
        )
    return hints


def _math(text: str) -> str:
    """A guard's Python comparison as a hint shows it, in mathematical signs (``seq ≤ 64``)."""
    for python, sign in _MATH:
        text = text.replace(f" {python} ", f" {sign} ")
    return text
