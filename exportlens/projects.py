"""The projects one ``exportlens check`` reaches, each checked against its own specs.

A folder holding its own pyproject.toml is a project of its own (as ruff treats a
nested configuration): the outer project's scan does not descend into it (walk.py),
and it is planned from its own root, with its own specs, cache and ``exclude``. Its
report is then said from the first project's root (core/rebase.py), suppressions
applied (suppressions.py), so the user reads one report."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .exporter.core.rebase import prefix, rebased, target
from .exporter.core.report import Finding, ModuleReport, Report
from .exporter.find.index_cache import IndexCache
from .exporter.find.walk import projects_under
from .exporter.spec.loading import find_root
from .exporter.spec.plan import Plan, make_plan
from .exporter.spec.pyproject import excludes
from .exporter.spec.suppressions import Suppressor, suppress


@dataclass
class Project:
    plan: Plan
    prefix: str  # its root, relative to the first project's: what its report's paths are put under

    def shown(self, name: str) -> str:
        """A module's target as the combined report names it."""
        return target(name, self.prefix)


def projects(paths: list[Path], only: set[str] | None = None, *, cache: bool = True) -> list[Project]:
    """One plan per project: each path's own project, and each project nested in a folder given.
    Modules are found by the editor's index engine; with ``cache``, what it learns is kept in
    the project's ``.exportlens/cache/index``, so a tree checked again is only stat'ed."""
    enabled = gc.isenabled()
    gc.disable()  # planning makes an object or more per module and no cycle: the collector only walks them
    try:
        return _projects(paths, only, cache)
    finally:
        if enabled:
            gc.enable()


def _projects(paths: list[Path], only: set[str] | None, cache: bool) -> list[Project]:
    groups: dict[Path, list[Path]] = {}
    for given in paths:
        path = given.resolve()
        groups.setdefault(find_root(path).resolve(), []).append(path)
        if path.is_dir():
            for inner in projects_under(path, exclude=excludes()):
                groups.setdefault(inner.resolve(), []).append(inner.resolve())
    base = next(iter(groups))
    out = []
    for root, folders in groups.items():
        step = prefix(base, root)
        index = IndexCache.of_project(root) if cache else None
        plan = make_plan(list(dict.fromkeys(folders)), root=root, only=_own(only, step), indexed=True, cache=index)
        out.append(Project(plan, step))
    return out


def _own(only: set[str] | None, step: str) -> set[str] | None:
    """``--module`` names as one project's plan knows them: as shown, or as its own."""
    if not only or not step:
        return only
    return only | {name[len(step) + 1 :] for name in only if name.startswith(step + "/")}


def joined_report(found: list[Project], run: Callable[[Plan], Report], *, judge: bool) -> tuple[Report, int]:
    """Every project's report, suppressions applied, as one report from the first root;
    and how many findings were suppressed."""
    modules: list[ModuleReport] = []
    findings: list[Finding] = []
    hidden = 0
    for project in found:
        report, count = suppress(run(project.plan), Suppressor.of(project.plan), judge=judge)
        report = rebased(report, project.prefix)
        modules += report.modules
        findings += report.findings
        hidden += count
    return Report(tuple(modules), tuple(findings)), hidden
