"""``exportlens init [PATH...]``: a proven spec for every module that has none.

Each module without a table, ``example_inputs()`` or annotations gets the first guess
that runs (edit/scaffold.py, workers/guess_trials.py), written into its project's
pyproject.toml with tomlkit: every other byte stays. A module built inside another
project module's ``__init__`` is covered by that parent and gets no table. A second
run finds nothing to do. ``--dry-run`` prints the diff instead of writing.

pyproject.toml is written only where it is the project's own file: never through a link
(one planted could point at another project's file, or at ``~/.bash_profile``), never in
a project folder that holds a home folder (``check``'s EL505 rule), and opened with
``O_NOFOLLOW`` so that a link made meanwhile is refused too.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .exporter.core.regular_files import read_regular
from .exporter.edit.library_factories import factory_candidates_elsewhere
from .exporter.edit.scaffold import FACTORY_DEF, Candidate, candidates, factory_candidates, with_tables
from .exporter.find.children import parents
from .exporter.find.discover import python_files
from .exporter.spec.loading import PYPROJECT
from .exporter.spec.plan import Plan, Planned
from .exporter.spec.pyproject import excludes
from .printed import say

if TYPE_CHECKING:
    from .exporter.core.targets import ModuleClass
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
            source = plan.sources.text(planned.module.path)
            out.guesses[target] = candidates(planned.module, source, read=plan.sources.text)
    _factories(plan, out)
    return out


def _factories(plan: Plan, out: Needs) -> None:
    """``get_model``/``build_*`` functions that return a module: one of their file's classes, one
    imported from another project file, or an installed model (``LlamaForCausalLM``): each a
    module to check, built by its factory (a table with ``factory``), where it has no table yet."""
    classes: dict[str, dict[str, ModuleClass]] = {}
    for planned in plan.modules:
        classes.setdefault(planned.module.path, {})[planned.module.name] = planned.module
    for path in _factory_files(plan, classes):
        source = plan.sources.text(path)
        found = factory_candidates(path, source, classes.get(path, {}))
        found.update(factory_candidates_elsewhere(path, source, classes, plan.sources.text))
        out.guesses.update({t: g for t, g in found.items() if t not in plan.project.tables})


def _factory_files(plan: Plan, classes: dict[str, dict[str, ModuleClass]]) -> list[str]:
    """The project files that may hold a factory: those of its modules, and any other that
    defines one of the names (a file with no module class: ``models/__init__.py``)."""
    others = set()
    for file in python_files(plan.sources, [plan.root], excludes(plan.sources)):  # the project's `exclude` kept
        path = plan.sources.rel(file)
        if path not in classes and FACTORY_DEF.search(plan.sources.text(path)):
            others.add(path)
    return sorted({*classes, *others})


def _without_spec(plan: Plan, planned: Planned) -> bool:
    """No table (not even a broken one), no example_inputs(), no annotations."""
    return planned.spec is None and planned.variant is None and planned.module.target not in plan.project.tables


def run(projects: list[Project], pool: Pool, *, dry_run: bool) -> int:
    """Guess, prove and write each project's specs; say what was done."""
    wrote, failing = 0, 0
    for project in projects:
        try:
            done = _one_project(project, pool, dry_run)
        except Refused as e:
            say(f"exportlens init: {e}", err=True)
            return USAGE
        wrote, failing = wrote + done[0], failing + done[1]
    verb = "would write" if dry_run else "wrote"
    print(
        f"{verb} {wrote} spec{'s' if wrote != 1 else ''}"
        if wrote
        else "every module has a spec, or is covered by its parent: nothing to do"
    )
    return FOUND if failing else OK


def _one_project(project: Project, pool: Pool, dry_run: bool) -> tuple[int, int]:
    """One project's specs guessed, proven and written: how many, and how many fail."""
    from .exporter.workers.guess_trials import prove_guesses

    need = needs(project.plan)
    root = project.plan.root
    before = own_pyproject_text(root) if need.guesses else None
    proven = prove_guesses(root, need.guesses, before, pool) if need.guesses else {}
    for target, parent in sorted(need.covered.items()):
        say(f"{project.shown(target)}: covered by {project.shown(parent)}, which builds it")
    for target, why in sorted(need.unguessable.items()):
        say(f"{project.shown(target)}: not guessed ({why}); add its spec by hand (docs/spec.md)")
    for target, p in proven.items():
        say(f"{project.shown(target)}: {'' if dry_run else 'wrote a spec; '}{p.verdict}")
    if not proven:
        return 0, 0
    after = with_tables(before, {t: p.candidate.table(p.verdict) for t, p in proven.items()})
    shown_path = project.shown(PYPROJECT)
    if dry_run:
        diff = difflib.unified_diff((before or "").splitlines(True), after.splitlines(True), shown_path, shown_path)
        say("".join(diff), end="")
    else:
        write_pyproject(root / PYPROJECT, after, shown_path, existed=before is not None)
    return len(proven), sum(not p.runs for p in proven.values())


class Refused(Exception):
    """Why init writes no pyproject.toml for a project: said to the user, nothing written."""


def own_pyproject_text(root: Path) -> str | None:
    """The project's pyproject.toml text (None: there is none), where init may write it."""
    from .exporter.workers.outcome import too_wide_root

    if too_wide_root(root):
        raise Refused(
            f"the project folder {root} holds your home folder: a pyproject.toml there would make it one project"
            " with everything under it (and `check` exports none of it: EL505); put the model in a folder of its"
            " own with a .git or a pyproject.toml, and run init there"
        )
    path = root / PYPROJECT
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Refused(f"{PYPROJECT} cannot be read: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise Refused(
            f"{PYPROJECT} is a link (to {os.readlink(path)!r}), and exportlens writes no file through a link:"
            " it may be another project's file; replace the link with the file itself, or run init where it is"
        )
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        what = "shared with another file (a hard link)" if stat.S_ISREG(st.st_mode) else "not a regular file"
        raise Refused(f"{PYPROJECT} is {what}: exportlens writes only a file of the project's own")
    try:
        return read_regular(path, follow=False).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise Refused(f"{PYPROJECT} cannot be read as UTF-8 text: {e}") from None


def write_pyproject(path: Path, text: str, shown: str, *, existed: bool) -> None:
    """``text`` written to ``path`` only where it is the regular file read (or none, where
    none was): ``O_NOFOLLOW`` refuses a link, ``O_EXCL`` one made since, ``O_NONBLOCK`` a
    FIFO's wait; the file is cut short only once ``fstat`` says it is a lone regular file."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | nonblock | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags if existed else flags | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as e:
        raise Refused(f"{shown} was not written: {e.strerror or e} (a link or another file is there now)") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                raise Refused(f"{shown} was not written: it is no longer a lone regular file")
            if nonblock:
                os.set_blocking(fd, True)
            os.ftruncate(fd, 0)
            out.write(text)
    except OSError as e:
        raise Refused(f"{shown} was not written whole: {e.strerror or e}") from None
