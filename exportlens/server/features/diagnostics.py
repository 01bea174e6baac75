"""Findings -> LSP diagnostics for one file: syntax errors from the index, spec errors,
and every export finding located in that file (the line that broke the export may be
in a helper file that another module imports)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from lsprotocol import types

from ...exporter.core import codes
from ...exporter.core.report import Finding, Severity
from ...exporter.static.spec import PYPROJECT
from ..positions import Lines
from ..session import Session

SOURCE = "exportlens"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def findings_for(session: Session, path: Path, overrides: Mapping[Path, str]) -> list[tuple[Finding, str | None]]:
    """Every finding located in ``path``, with the module target it belongs to (None: static)."""
    root = session.root_of(path)
    rel = relative(root, path)
    out: list[tuple[Finding, str | None]] = []
    entry = session.index.get(path)
    if entry is not None:
        out += [(f, None) for f in entry.findings]
    # spec problems: a table's on pyproject.toml lines, an example_inputs() method's in its own file,
    # so only those modules are resolved (this runs for every open file each time an export lands)
    if path.name == PYPROJECT:
        tables = session.project(root, overrides).tables
        modules = [m for _, m in session.index.under(root) if m.target in tables]
    else:
        modules = list(entry.modules) if entry is not None else []
    plan = session.plan(root, modules, overrides)
    out += [(f, None) for f in plan.findings if f.path == rel]
    for planned in plan.modules:
        out += [(f, planned.target) for f in planned.findings if f.path == rel]
    for (r, target), result in session.results.items():
        if r == root:
            out += [(f, target) for f in result.report.findings if f.path == rel and f.kind.value != "spec-error"]
    return _unique(out)


def _unique(items: Iterable[tuple[Finding, str | None]]) -> list[tuple[Finding, str | None]]:
    seen, out = set(), []
    for f, t in items:
        key = (f.code, f.line, f.column, f.message)
        if key not in seen:
            seen.add(key)
            out.append((f, t))
    return out


def to_diagnostic(f: Finding, target: str | None, lines: Lines, root: Path, utf16: bool = True) -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            types.Location((root / r.path).as_uri(), types.Range(types.Position(r.line - 1, 0), types.Position(r.line - 1, 0))),
            r.message,
        )
        for r in f.related
    ]
    return types.Diagnostic(
        range=lines.range(f.line, f.column, f.end_line, f.end_column, utf16=utf16),
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        code_description=types.CodeDescription(href=codes.docs_url(f.code)),
        source=SOURCE,
        related_information=related or None,
        data={"target": target, "code": f.code, "line": f.line, "message": f.message},  # code actions find the finding by these
    )


def diagnostics(session: Session, path: Path, text: str, overrides: Mapping[Path, str], utf16: bool = True) -> list[types.Diagnostic]:
    root = session.root_of(path)
    lines = Lines(text)
    found = findings_for(session, path, overrides)
    return [to_diagnostic(f, t, lines, root, utf16) for f, t in found if f.code != codes.SPEC_MISSING.code]


def relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
