"""``--format github``: each finding as a GitHub Actions workflow command, which the
runner turns into an annotation on the line, in the pull request's diff (standard
library and core only: ``merge`` prints it too, without torch)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .exporter.core.escapes import github_data, github_property
from .exporter.core.report import Finding, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def command(f: Finding, file: str) -> str:
    """``::error file=...,line=...,col=...,endLine=...,endColumn=...,title=EL204::message``.
    Columns go only where the finding starts and ends on one line (GitHub takes no
    columns across lines); its fixes follow the message, one a line."""
    end_line = f.end_line or f.line
    props = [("file", file), ("line", str(f.line))]
    if end_line == f.line:
        props.append(("col", str(f.column)))
    props.append(("endLine", str(end_line)))
    if end_line == f.line and f.end_column is not None:
        props.append(("endColumn", str(f.end_column)))
    props.append(("title", f.code))
    message = "\n".join([f.message, *(f"fix: {fix.title}" for fix in f.fixes)])
    head = ",".join(f"{k}={github_property(v)}" for k, v in props)
    return f"::{_COMMAND[f.severity]} {head}::{github_data(message)}"


def commands(findings: Iterable[Finding], file: Callable[[str], str]) -> list[str]:
    """One command per finding, in path and line order; ``file`` names a report's path
    as the workflow sees it (relative to where the check runs: the checkout)."""
    ordered = sorted(findings, key=lambda f: (f.path, f.line, f.column))
    return [command(f, file(f.path)) for f in ordered]
