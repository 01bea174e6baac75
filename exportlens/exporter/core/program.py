"""An exported module as text, in the user's names: what `exportlens show` prints and
what the editor's "Show exported program" document holds. No torch here."""

from __future__ import annotations

from collections.abc import Callable

from .guards import Guard, GuardKind
from .report import ModuleReport, Status

SourceLine = Callable[[str, int], str]  # (path relative to the root, 1-based line) -> that line's code


def program_text(report: ModuleReport, source_line: SourceLine, *, graph: bool = True) -> str:
    """Signature, range constraints, equalities, guards, shapes line by line and the graph; for a
    module that did not export, what stopped it."""
    head = (
        f"{report.target}  (spec: {report.spec_source or 'none'};"
        f" {report.seconds:.2f} s, torch {report.torch_version or '?'})"
    )
    s = report.summary
    if report.status is not Status.EXPORTED or s is None:
        rows = [f"  {f.path}:{f.line}: {f.code} {f.message}" for f in report.findings]
        return "\n".join([head, f"  did not export ({report.status.value}):", *rows]) + "\n"
    out = [head, f"  signature: {s.signature}"]
    for title, entries in (("range constraints", s.range_constraints), ("equalities", s.equalities)):
        if entries:
            out += [f"  {title}:", *(f"    {entry}" for entry in entries)]
    out += _guard_rows(s.guards, report.target.rpartition(":")[0])
    if s.line_shapes:
        out.append("  shapes by line:")
        for shapes in s.line_shapes:
            out.append(f"    {shapes.path}:{shapes.line}  {source_line(shapes.path, shapes.line).strip()}")
            out.append(f"        -> {', '.join(shapes.shapes)}")
    if graph and s.graph.strip():
        out += ["  graph:", *(f"    {row}" for row in s.graph.rstrip().splitlines())]
    return "\n".join(out) + "\n"


def _guard_rows(guards: tuple[Guard, ...], own_file: str) -> list[str]:
    """The guards each line made, ``line N: text``; a declared range is shown above, among
    the range constraints, so only guards the code made are listed."""
    rows = []
    for g in (g for g in guards if g.line is not None):
        where = f"line {g.line}" if g.path == own_file else f"{g.path}:{g.line}"
        when = "  (checked when the program runs)" if g.kind is GuardKind.RUNTIME_ASSERT else ""
        rows.append(f"    {where}: {g.text}{when}")
    return ["  guards:", *rows] if rows else []
