"""Which Python files a scan reads: the one walk discover, the server's indexer and the
CLI share (pathspec; no torch).

Below the folder walked, these are skipped: hidden folders and the usual environment
and build folders (``SKIP_DIRS``), what a ``.gitignore`` ignores (git's rules: a deeper
file overrides a higher one, from the checkout's top), what a project's ``exclude``
names (gitignore-style globs relative to the folder holding its pyproject.toml; whoever
walks hands them in, read by spec/pyproject.py from the text the user sees), and,
where ``nested`` is off, a folder holding a pyproject.toml of its own: another project.
The folder walked is never skipped itself: a path the user names is scanned.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.regular_files import read_regular

if TYPE_CHECKING:
    import pathspec

SKIP_DIRS = frozenset({"__pycache__", ".venv", "venv", "node_modules", "build", "dist", "site-packages"})
PYPROJECT = "pyproject.toml"  # spec.PYPROJECT (spec imports this module)
GITIGNORE = ".gitignore"

_Layer = tuple[Path, "pathspec.GitIgnoreSpec"]  # patterns and the folder they are relative to
Exclude = Callable[[Path], Sequence[str]]  # a project's folder -> its ``exclude`` patterns


def no_exclude(project: Path) -> Sequence[str]:
    """No project excludes anything (a walk that needs no project's settings)."""
    return ()


def python_files_under(folder: Path, *, exclude: Exclude, nested: bool = True) -> Iterator[Path]:
    """The ``*.py`` files to scan under ``folder``. With ``nested`` (the server's index of a
    workspace) the files of projects inside it too, each under its own ``exclude``; without,
    only ``folder``'s own project's."""
    for kind, path in _walk(Path(folder), nested, exclude):
        if kind == "file":
            yield path


def projects_under(folder: Path, *, exclude: Exclude) -> list[Path]:
    """The folders below ``folder`` that hold a pyproject.toml of their own (not skipped)."""
    return [path for kind, path in _walk(Path(folder), True, exclude, files=False) if kind == "project"]


def scanned(path: Path, folder: Path, *, exclude: Exclude, nested: bool = False) -> bool:
    """Whether the walk of ``folder`` reaches ``path`` (an unsaved buffer the disk has not
    got yet): no folder between them, nor the file, is skipped."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return False
    rules = _Rules.above(folder, exclude)
    here = folder
    for name in parts[:-1]:
        rules = rules.inside(here)
        here = here / name
        if _skip_dir(here, rules) or (not nested and (here / PYPROJECT).is_file()):
            return False
    return not rules.inside(here).ignores(path, is_dir=False)


def exclude_problem(value: Any) -> str | None:
    """What is wrong with an ``exclude`` value; None when it is a list of gitignore-style globs."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return 'exclude must be a list of gitignore-style globs, like exclude = ["vendor/", "**/*_pb2.py"]'
    import pathspec  # here: a walk that meets no pattern never imports it

    for glob in value:
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except ValueError as e:
            return f"exclude: {glob!r} is not a gitignore-style glob ({e})"
    return None


# -- the walk ---------------------------------------------------------------------------


def _walk(folder: Path, nested: bool, exclude: Exclude, files: bool = True) -> Iterator[tuple[str, Path]]:
    """("file", path) for each file to scan (with ``files``), ("project", folder) for each nested
    project met. Each folder is listed once: its listing says whether it holds a pyproject.toml
    or a .gitignore, so neither is looked for where it is not."""
    stack = [(folder, _Rules.above(folder, exclude), True)]  # a folder, the rules above it, whether it is the walk's
    while stack:
        here, rules, given = stack.pop()
        try:
            listed = {e.name: e for e in sorted(os.scandir(here), key=lambda e: e.name)}
        except OSError:
            continue
        project = PYPROJECT in listed and listed[PYPROJECT].is_file()
        if project and not given:
            yield "project", here
            if not nested:
                continue
        rules = rules.inside(here, project=project, gitignore=GITIGNORE in listed)
        subfolders = []
        for entry in listed.values():
            if entry.is_dir(follow_symlinks=False):
                path = Path(entry.path)
                if not _skip_dir(path, rules):
                    subfolders.append((path, rules, False))
            elif files and entry.name.endswith(".py") and not rules.ignores(path := Path(entry.path), is_dir=False):
                yield "file", path
        stack.extend(reversed(subfolders))  # the first in name order is walked first


def _skip_dir(path: Path, rules: _Rules) -> bool:
    return path.name.startswith(".") or path.name in SKIP_DIRS or rules.ignores(path, is_dir=True)


@dataclass(frozen=True)
class _Rules:
    """The ignore rules in force in one folder, outermost first."""

    read: Exclude  # a project's exclude patterns
    git: tuple[_Layer, ...] = ()  # .gitignore files: the deepest that decides, decides
    exclude: tuple[_Layer, ...] = ()  # projects' exclude: any match skips

    @classmethod
    def above(cls, folder: Path, read: Exclude) -> _Rules:
        """The rules the folders above ``folder`` set for what is inside it: the .gitignore
        files from the checkout's top (or the project's folder) down, its project's exclude.
        None where they would skip ``folder`` itself: a folder the user names is scanned."""
        folder = folder.resolve()
        above = list(reversed(folder.parents))
        top = next((i for i, f in enumerate(above) if (f / ".git").exists()), None)
        if top is None:
            top = next((i for i, f in enumerate(above) if (f / PYPROJECT).is_file()), len(above))
        rules = _Rules(read)
        for parent in above[top:]:
            rules = rules._with_gitignore(parent)
        project = next((f for f in folder.parents if (f / PYPROJECT).is_file()), None)
        if project is not None and not (folder / PYPROJECT).is_file():
            rules = rules._with_exclude(project)  # only the nearest project's: ruff's rule too
        return _Rules(read) if rules.ignores(folder, is_dir=True) else rules

    def inside(self, folder: Path, *, project: bool | None = None, gitignore: bool = True) -> _Rules:
        """These rules with ``folder``'s own .gitignore and, for a project, its exclude
        (``project`` and ``gitignore``: what the folder's listing says of them, where it was listed)."""
        rules = self._with_gitignore(folder) if gitignore else self
        project = (folder / PYPROJECT).is_file() if project is None else project
        return rules._with_exclude(folder) if project else rules

    def _with_gitignore(self, folder: Path) -> _Rules:
        spec = _spec(_lines(folder / GITIGNORE))
        return self if spec is None else _Rules(self.read, (*self.git, (folder, spec)), self.exclude)

    def _with_exclude(self, project: Path) -> _Rules:
        spec = _spec(self.read(project))
        return self if spec is None else _Rules(self.read, self.git, (*self.exclude, (project, spec)))

    def ignores(self, path: Path, *, is_dir: bool) -> bool:
        if any(spec.match_file(_relative(path, base, is_dir)) for base, spec in self.exclude):
            return True
        for base, spec in reversed(self.git):
            decided = spec.check_file(_relative(path, base, is_dir)).include
            if decided is not None:
                return decided
        return False


def _relative(path: Path, base: Path, is_dir: bool) -> str:
    return path.relative_to(base).as_posix() + ("/" if is_dir else "")


def _spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec | None:
    """The patterns that compile (git skips a line it cannot read too); None when there are none."""
    import pathspec  # here: a walk that meets no pattern never imports it

    good = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        good.append(line)
    spec = pathspec.GitIgnoreSpec.from_lines(good) if good else None
    return spec if spec is not None and len(spec) else None


def _lines(path: Path) -> list[str]:
    try:
        return read_regular(path).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
