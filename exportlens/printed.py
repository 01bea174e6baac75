"""What ``exportlens check`` prints for a person: each finding on its line with its fixes,
then one summary line, which says so when nothing was checked."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from .exporter.core.escapes import terminal_line
from .exporter.core.report import Finding, Report, Status
from .exporter.core.shards import Shard

CI_FORMATS = ("github", "sarif")  # where a check that checked nothing fails unless asked otherwise
NOTHING_CHECKED = "nothing was checked: no module here has example inputs (`exportlens init` writes them)"


def say(text: str, *, err: bool = False, end: str = "\n") -> None:
    """Print ``text`` for a person, each line escaped for a terminal (``terminal_line``): a
    message may quote a file name, a class name or a line of the user's code."""
    print("\n".join(map(terminal_line, text.split("\n"))), end=end, file=sys.stderr if err else sys.stdout)


def checked_nothing(report: Report) -> bool:
    """A check that would pass having checked nothing: every module skipped (no example
    inputs), or none found, and no error (a broken spec is a failure of its own)."""
    return all(m.status is Status.SKIPPED for m in report.modules) and report.exit_code == 0


def relative(root: Path, path: str) -> str:
    return _relative(root, path, os.getcwd())


@lru_cache(maxsize=4096)
def _relative(root: Path, path: str, cwd: str) -> str:
    """Once per file and folder: a report of thousands of findings names a few hundred files."""
    full = root / path
    try:
        return os.path.relpath(full, cwd)
    except ValueError:
        return str(full)


def located(root: Path, f: Finding, cwd: str | None = None) -> str:
    """``f`` on its line, its path relative to ``cwd`` (default: the current folder); the path
    and the message escaped for a terminal (either may hold what a module or a file name says)."""
    return terminal_line(f"{_relative(root, f.path, cwd or os.getcwd())}:{f.line}:{f.column}: {f.code} {f.message}")


def print_text(root: Path, report: Report, shard: tuple[Shard, int] | None = None, hidden: int = 0) -> None:
    findings = sorted(report.all_findings, key=lambda f: (f.path, f.line, f.column))
    lines = []  # written at once: a tree of 11k modules is as many lines
    cwd = os.getcwd()
    for f in findings:
        lines.append(located(root, f, cwd))
        lines.extend(f"    fix: {fix.title}" for fix in f.fixes)
    for m in report.modules:  # each deployment target's, under the export's verdict
        lines.extend(f"{relative(root, m.target)}: {lowering}" for lowering in m.lowerings)
    lines.append(summary(report, len(findings), shard, hidden))
    print("\n".join(map(terminal_line, lines)))  # a fix's title and a target name are the user's text too


def summary(report: Report, findings: int, shard: tuple[Shard, int] | None = None, hidden: int = 0) -> str:
    """``5 modules: 1 exported, 4 failed, 0 skipped; 4 findings``; for a shard and the
    number of modules before it was taken, ``2 of 5 modules (shard 2/3): ...``; with
    findings suppressed (suppressions.py), ``; 3 findings, 1 suppressed``."""
    counts = {s: sum(1 for m in report.modules if m.status is s) for s in Status}
    n, cached = len(report.modules), sum(m.cached for m in report.modules)
    head = f"{n} module{'s' if n != 1 else ''}"
    if shard:
        head = f"{n} of {shard[1]} module{'s' if shard[1] != 1 else ''} (shard {shard[0]})"
    if not report.modules and checked_nothing(report):
        return f"{head}: " + (
            "none falls in this shard" if shard else "nothing was checked (no nn.Module under the paths given)"
        )
    return (
        f"{head}: {counts[Status.EXPORTED]} exported, {counts[Status.FAILED]} failed, {counts[Status.SKIPPED]} skipped"
        + (f"; {findings} finding{'s' if findings != 1 else ''}" if findings else "")
        + ((", " if findings else "; ") + f"{hidden} suppressed" if hidden else "")
        + (f" ({cached} unchanged since an earlier run: from its cache)" if cached else "")
        + (f"; {NOTHING_CHECKED}" if checked_nothing(report) else "")
    )
