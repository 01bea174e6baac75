"""An exported module as text, in the user's names: what `exportlens show` prints and
what the editor's "Show exported program" document holds. No torch here."""

from __future__ import annotations

from collections.abc import Callable

from .report import ModuleReport, Status

SourceLine = Callable[[str, int], str]  # (path relative to the root, 1-based line) -> that line's code


def program_text(report: ModuleReport, source_line: SourceLine, *, graph: bool = True) -> str:
    """Signature, range constraints, equalities, shapes line by line and the graph; for a
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
    for title, rows in (("range constraints", s.range_constraints), ("equalities", s.equalities)):
        if rows:
            out += [f"  {title}:", *(f"    {row}" for row in rows)]
    if s.line_shapes:
        out.append("  shapes by line:")
        for shapes in s.line_shapes:
            out.append(f"    {shapes.path}:{shapes.line}  {source_line(shapes.path, shapes.line).strip()}")
            out.append(f"        -> {', '.join(shapes.shapes)}")
    if graph and s.graph.strip():
        out += ["  graph:", *(f"    {row}" for row in s.graph.rstrip().splitlines())]
    return "\n".join(out) + "\n"
