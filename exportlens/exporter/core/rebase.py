"""A report's paths made relative to another folder (standard library only).

``exportlens check OUTER`` checks a project nested in OUTER (its own pyproject.toml)
against its own specs, from its own root; its report is then said from OUTER's root,
as one report: ``inner/models/net.py`` where the inner project says ``models/net.py``."""

from __future__ import annotations

import os
import posixpath
from dataclasses import replace
from pathlib import Path

from .report import Finding, ModuleReport, Report
from .targets import Target


def prefix(base: Path, root: Path) -> str:
    """``root`` relative to ``base``, POSIX (``""``: the same folder)."""
    rel = Path(os.path.relpath(root, base)).as_posix()
    return "" if rel == "." else rel


def rebased(report: Report, prefix: str) -> Report:
    if not prefix:
        return report
    return Report(
        tuple(_module(m, prefix) for m in report.modules), tuple(_finding(f, prefix) for f in report.findings)
    )


def target(text: str, prefix: str) -> str:
    t = Target.parse(text)
    return str(replace(t, path=_path(t.path, prefix)))


def _path(path: str, prefix: str) -> str:
    return path if not prefix or posixpath.isabs(path) else posixpath.normpath(posixpath.join(prefix, path))


def _finding(f: Finding, prefix: str) -> Finding:
    fixes = tuple(
        replace(fix, edits=tuple(replace(e, path=_path(e.path, prefix)) for e in fix.edits)) for fix in f.fixes
    )
    related = tuple(replace(r, path=_path(r.path, prefix)) for r in f.related)
    return replace(f, path=_path(f.path, prefix), fixes=fixes, related=related)


def _module(m: ModuleReport, prefix: str) -> ModuleReport:
    summary = m.summary
    if summary is not None:
        shapes = tuple(replace(s, path=_path(s.path, prefix)) for s in summary.line_shapes)
        summary = replace(summary, line_shapes=shapes)
    findings = tuple(_finding(f, prefix) for f in m.findings)
    return replace(m, target=target(m.target, prefix), findings=findings, summary=summary)
