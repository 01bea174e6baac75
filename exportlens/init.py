"""``exportlens init [PATH...]``: a proven spec for every module that has none.

Each module without a table, ``example_inputs()`` or annotations gets the first guess
that runs (edit/scaffold.py, workers/guessed.py), written into its project's
pyproject.toml with tomlkit: every other byte stays. A module built inside another
project module's ``__init__`` is covered by that parent and gets no table. A second
run finds nothing to do. ``--dry-run`` prints the diff instead of writing.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .exporter.edit.scaffold import Candidate, candidates, with_tables
from .exporter.find.children import parents
from .exporter.spec.loading import PYPROJECT
from .exporter.spec.plan import Plan, Planned

if TYPE_CHECKING:
    from .exporter.workers.pool import Pool
    from .projects import Project

USAGE, FOUND, OK = 2, 1, 0


@dataclass
class Needs:
    """One project's modules with no spec: those to guess for, and those a parent covers."""

    plan: Plan
    guesses: dict[str, list[Candidate]] = field(default_factory=dict)
    covered: dict[str, str] = field(default_factory=dict)  # child -> parent
    unguessable: dict[str, str] = field(default_factory=dict)  # target -> why


def needs(plan: Plan) -> Needs:
    """Which of ``plan``'s modules need a spec, and the guesses for each."""
    out = Needs(plan)
    built_in = parents((p.module for p in plan.modules), plan.sources)
    for planned in plan.modules:
        if not _without_spec(plan, planned):
            continue
        target = planned.module.target
        if target in built_in:
            out.covered[target] = built_in[target]
        elif planned.module.forward is None:
            out.unguessable[target] = "no forward of its own to read"
        else:
            out.guesses[target] = candidates(planned.module, plan.sources.text(planned.module.path))
    return out


def _without_spec(plan: Plan, planned: Planned) -> bool:
    """No table (not even a broken one), no example_inputs(), no annotations."""
    return planned.spec is None and planned.variant is None and planned.module.target not in plan.project.tables


def run(projects: list[Project], pool: Pool, *, dry_run: bool) -> int:
    """Guess, prove and write each project's specs; say what was done."""
    from .exporter.workers.guessed import prove_guesses

    wrote, failing = 0, 0
    for project in projects:
        need = needs(project.plan)
        root = project.plan.root
        path = root / PYPROJECT
        before = path.read_text(encoding="utf-8") if path.is_file() else None
        proven = prove_guesses(root, need.guesses, before, pool) if need.guesses else {}
        for target, parent in sorted(need.covered.items()):
            print(f"{project.shown(target)}: covered by {project.shown(parent)}, which builds it")
        for target, why in sorted(need.unguessable.items()):
            print(f"{project.shown(target)}: not guessed ({why}); add its spec by hand (docs/spec.md)")
        for target, p in proven.items():
            print(f"{project.shown(target)}: {'' if dry_run else 'wrote a spec; '}{p.verdict}")
            failing += not p.runs
        if not proven:
            continue
        after = with_tables(before, {t: p.candidate.table(p.verdict) for t, p in proven.items()})
        shown_path = project.shown(PYPROJECT)
        if dry_run:
            sys.stdout.writelines(
                difflib.unified_diff((before or "").splitlines(True), after.splitlines(True), shown_path, shown_path)
            )
        else:
            path.write_text(after, encoding="utf-8")
        wrote += len(proven)
    verb = "would write" if dry_run else "wrote"
    print(
        f"{verb} {wrote} spec{'s' if wrote != 1 else ''}"
        if wrote
        else "every module has a spec, or is covered by its parent: nothing to do"
    )
    return FOUND if failing else OK
