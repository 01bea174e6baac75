"""``exportlens diff``: what changed in each module's exported contract between two
saved JSON reports, the working tree and a git ref (``--base``, checked in a worktree of it),
or two interpreters (``--python``: two torch versions). Each side is a ``check --format json``
report, read by the one reader (``merge.read_report``) into contracts (core/contract.py).
Imported by cli.py at start: the standard library and core here, a check run as a process."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .exporter.core.contract import contracts
from .exporter.core.contract_diff import ChangeKind, diff
from .exporter.core.report import Report, from_dict
from .isolation import code_command, environment
from .merge import MergeError, read_report
from .printed import say

USAGE, FOUND, OK = 2, 1, 0
_CLI = "import sys; from exportlens.cli import main; sys.exit(main(sys.argv[1:]))"
_CACHE = Path(".exportlens") / "cache" / "verdicts"


class SideError(Exception):
    """A side that could not be checked or read: a usage error (exit 2), said in one line."""


def fail_on(text: str) -> frozenset[ChangeKind]:
    """``specialization,new-guard,op-set`` as kinds; a name that is none refused, naming those that are."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in {k.value for k in ChangeKind}]
    if unknown:
        known = ", ".join(k.value for k in ChangeKind)
        raise argparse.ArgumentTypeError(f"no change is called {unknown[0]!r} (the kinds: {known})")
    return frozenset(ChangeKind(n) for n in names)


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser(
        "diff",
        help="what changed in each module's exported program: two JSON reports, a git ref (--base), two interpreters",
    )
    d.add_argument(
        "inputs",
        nargs="*",
        type=Path,
        metavar="OLD.json NEW.json | PATH",
        help="two reports, or with --base or --python the paths to check (default: .)",
    )
    d.add_argument("--base", metavar="REF", help="the other side: PATHs as they are at this git ref (a worktree of it)")
    d.add_argument("--python", metavar="OTHER", help="the other side: PATHs checked with this interpreter (its torch)")
    d.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    d.add_argument(
        "--fail-on",
        type=fail_on,
        default=frozenset(),
        metavar="KINDS",
        help=f"exit 1 when a change of these kinds occurs, comma-separated ({', '.join(k.value for k in ChangeKind)})",
    )
    d.add_argument("--root", type=Path, metavar="DIR", help="the project root of two reports' paths (default: .)")
    d.add_argument("--no-cache", action="store_true", help="check both sides without the verdict cache")


def command(args: argparse.Namespace) -> int:
    running = args.base is not None or args.python is not None
    if not running and len(args.inputs) != 2:
        say(
            "exportlens diff: name two reports (OLD.json NEW.json), or the other side with --base REF or --python",
            err=True,
        )
        return USAGE
    try:
        old, new = _sides(args) if running else (_read(args.inputs[0]), _read(args.inputs[1]))
    except SideError as e:
        say(f"exportlens diff: {e}", err=True)
        return USAGE
    from .diffprint import rendered

    d = diff(contracts(old), contracts(new))
    root = args.root or (_root(args.inputs or [Path(".")]) if running else Path("."))
    print(rendered(d, args.format, root, args.fail_on))
    return FOUND if any(c.kind in args.fail_on for c in d.changes) else OK


def _read(path: Path) -> Report:
    try:
        return read_report(path)
    except MergeError as e:
        raise SideError(str(e)) from None


def _root(paths: list[Path]) -> Path:
    from .exporter.spec.loading import find_root

    return find_root(paths[0].resolve())


def _sides(args: argparse.Namespace) -> tuple[Report, Report]:
    here = Path.cwd()
    paths = [_inside(here, p) for p in args.inputs] if args.base else [str(p) for p in args.inputs]
    paths = paths or ["."]
    other = f"the check with {args.python}" if args.python else ""
    if args.base is None:
        other_side = _side_report(here, paths, args.python, args.no_cache, other)
        return other_side, _side_report(here, paths, None, args.no_cache)
    with _worktree(args.base) as there:
        if not args.no_cache:  # each side's unchanged modules answered by the other's verdicts
            _carry_cache(here, there, paths)
        at_base = [p for p in paths if (there / p).exists()]  # a folder the change adds: its modules are new
        old = (
            _side_report(there, at_base, args.python, args.no_cache, other or f"the check at {args.base}")
            if at_base
            else Report()
        )
        if not args.no_cache and args.python is None:
            _carry_cache(there, here, paths)
    return old, _side_report(here, paths, None, args.no_cache)


def _inside(here: Path, path: Path) -> str:
    """A path as the base's worktree has it: relative to the current folder, inside it."""
    full = (here / path).resolve()
    if not full.is_relative_to(here.resolve()):
        raise SideError(f"--base: {path} is not inside the current folder, whose base is checked")
    return str(full.relative_to(here.resolve())) or "."


def _side_report(cwd: Path, paths: list[str], python: str | None, no_cache: bool, side: str = "") -> Report:
    """``exportlens check --format json PATHS`` run in ``cwd`` (its workers under ``python``)."""
    argv = [
        "check",
        "--format",
        "json",
        *(["--python", python] if python else []),
        *(["--no-cache"] if no_cache else []),
    ]
    command = [*code_command(sys.executable, _CLI), *argv, "--", *paths]
    try:
        done = subprocess.run(command, cwd=cwd, env=environment(), capture_output=True, text=True, timeout=None)
    except OSError as e:
        raise SideError(f"cannot run exportlens check: {e.strerror or e}") from None
    side = side or "the check of this tree"
    if done.returncode not in (OK, FOUND):
        lines = done.stderr.strip().splitlines()
        raise SideError(f"{side} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
    try:
        data = json.loads(done.stdout)
        data.pop("schema", None)
        return from_dict(Report, data)
    except (ValueError, AttributeError) as e:
        raise SideError(f"{side} printed no report: {e}") from None


@contextmanager
def _worktree(ref: str) -> Iterator[Path]:
    """The current folder as it is at ``ref``: a detached worktree of the repository, removed after."""
    top, prefix = _git(Path.cwd(), "rev-parse", "--show-toplevel"), _git(Path.cwd(), "rev-parse", "--show-prefix")
    _git(Path(top), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=f"{ref!r} names no commit here")
    scratch = Path(tempfile.mkdtemp(prefix="exportlens-base-"))
    tree = scratch / "base"
    try:
        _git(Path(top), "worktree", "add", "--detach", "--quiet", str(tree), ref)
        yield tree / prefix
    finally:
        subprocess.run(["git", "-C", top, "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(["git", "-C", top, "worktree", "prune"], capture_output=True)


def _git(cwd: Path, *argv: str, what: str = "") -> str:
    try:
        done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True)
    except OSError as e:
        raise SideError(f"--base needs git: {e.strerror or e}") from None
    if done.returncode != 0:
        said = what or (done.stderr.strip().splitlines() or [f"git {argv[0]} failed"])[-1]
        raise SideError(f"--base: {said}")
    return done.stdout.strip()


def _carry_cache(source: Path, dest: Path, paths: list[str]) -> None:
    """One tree's verdict caches into the other's same folders (the project roots the paths
    name): a verdict is kept under the content of what it read and the interpreter, so a
    module unchanged between the sides is answered on the second as on the first. The
    store's own ``.gitignore`` and tag go with it, as the check that made it wrote them."""
    folders = {source} | {(source / p).resolve() for p in paths if (source / p).is_dir()}
    for folder in sorted(folders):
        top = folder / _CACHE.parts[0]
        if not folder.is_relative_to(source) or not (folder / _CACHE).is_dir() or top.is_symlink():
            continue
        entries = [top / ".gitignore", top / "cache" / "CACHEDIR.TAG", *(folder / _CACHE).iterdir()]
        for entry in entries:  # plain files only: a link in a project's cache is not followed
            target = dest / entry.relative_to(source)
            if entry.is_symlink() or not entry.is_file() or target.exists():
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(entry, target)
            except OSError:  # a verdict not carried is only slower
                continue
