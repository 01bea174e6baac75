"""``exportlens record -- COMMAND``: specs from a real run (docs/spec.md, "Recorded specs").

The command (a training script, ``pytest tests/``, a demo) runs once, through the recorder
(runtime/recorder.py), confined as an export is unless ``--no-sandbox``. Each project module
class with no spec is watched; what its calls were given comes back as ``Recording``s, plain
JSON decoded with ``core/recorded.CODEC``, and record_tables.py turns them into tables. The
command line asks for this only of the user who types it: the editor has no such command.
Imported by cli.py at start: only the standard library and core here, the rest when run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .exporter.core.recorded import (
    CALLS_FOLDER,
    CODEC,
    FOLDER_VARIABLE,
    TARGETS_FILE,
    USER_PATH_VARIABLE,
    Call,
    Kind,
    Recorded,
    Recording,
    Seen,
)
from .isolation import command as python_command
from .isolation import environment
from .printed import say

if TYPE_CHECKING:
    from .projects import Project

USAGE, FOUND, OK = 2, 1, 0
CALLS = 8  # distinct calls kept per class, by default
RECORDING_MAX = 16 * 2**20  # bytes read of one process's recording: the command wrote it


def add_parser(sub: argparse._SubParsersAction) -> None:
    record = sub.add_parser(
        "record",
        help="run COMMAND once, watching every call of your modules, and write a spec for each that has none",
    )
    record.add_argument("--calls", type=int, default=CALLS, help=f"distinct calls kept per class (default: {CALLS})")
    record.add_argument("--dry-run", action="store_true", help="print the diff of pyproject.toml instead of writing it")
    record.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run COMMAND with your user's rights: it may write in the project (checkpoints, caches) and your home",
    )
    record.add_argument("--no-cache", action="store_true", help="do not keep the index of the project's files")
    record.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command to run, after --")


def command(args: argparse.Namespace) -> int:
    from .exporter.core import codes
    from .projects import projects

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv or args.calls < 1:
        say("exportlens record: name a command to run, as in `exportlens record -- python train.py`", err=True)
        return USAGE
    found = projects([Path(".")], cache=not args.no_cache)
    broken = [f for p in found for f in p.plan.findings if f.code == codes.SPEC_TOML.code]
    for f in broken:
        say(f"exportlens record: {f.path}:{f.line}: {f.message}", err=True)
    if broken:
        return USAGE
    return run(found, argv, calls=args.calls, sandbox=not args.no_sandbox, dry_run=args.dry_run)


def run(projects: list[Project], command: list[str], *, calls: int, sandbox: bool, dry_run: bool) -> int:
    """Record ``command``'s calls of each project's modules that have no spec; write their tables."""
    from .init import Refused
    from .record_tables import unspecified, write_project

    watched = {p.plan.root: unspecified(p) for p in projects}
    if not any(watched.values()):
        print("every module has a spec, or is covered by its parent: nothing to record")
        return OK
    if sandbox and (why := _unconfined()):
        say(f"exportlens record: the command runs unconfined, with your user's rights: {why}", err=True)
    folder = Path(tempfile.mkdtemp(prefix="exportlens-record-"))
    try:
        code = _run_command(folder, projects, watched, command, calls, sandbox)
        recorded = _read(folder / CALLS_FOLDER)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if code:
        hint = " (the sandbox lets it write only a scratch folder: --no-sandbox for checkpoints)" if sandbox else ""
        say(f"exportlens record: {shlex.join(command)} exited with {code}{hint}; writing what it showed", err=True)
    wrote = 0
    for project in projects:
        try:
            wrote += write_project(project, watched[project.plan.root], recorded, shlex.join(command), dry_run)
        except Refused as e:
            say(f"exportlens record: {e}", err=True)
            return USAGE
    verb = "would write" if dry_run else "wrote"
    print(
        f"{verb} {wrote} spec{'s' if wrote != 1 else ''}" if wrote else "no watched module was called: nothing written"
    )
    return FOUND if code else OK


def _unconfined() -> str | None:
    from .exporter.workers.sandbox import off_here

    return off_here()


def _run_command(folder: Path, projects, watched, command: list[str], calls: int, sandbox: bool) -> int:
    classes: dict[str, dict[str, str]] = {}
    for project in projects:
        for target, name in watched[project.plan.root].items():
            path = str((project.plan.root / target.rsplit(":", 1)[0]).resolve())
            classes.setdefault(path, {})[name] = target
    (folder / TARGETS_FILE).write_text(json.dumps({"calls": calls, "classes": classes}), encoding="utf-8")
    roots = [str(p.plan.root.resolve()) for p in projects]
    launcher = python_command(sys.executable, "exportlens.exporter.runtime.recorder", str(folder), str(int(sandbox)))
    env = environment(**{FOLDER_VARIABLE: str(folder), USER_PATH_VARIABLE: json.dumps(os.environ.get("PYTHONPATH"))})
    try:
        return subprocess.run([*launcher, *roots, "--", *command], env=env).returncode
    except KeyboardInterrupt:
        return 130


def _read(calls: Path) -> dict[str, list[Recorded]]:
    """Every process's recording, by target; one that cannot be read is said and left out."""
    out: dict[str, list[Recorded]] = {}
    for path in sorted(calls.glob("*.json")) if calls.is_dir() else ():
        try:
            with path.open("rb") as f:
                recording = CODEC.loads(f.read(RECORDING_MAX + 1)[:RECORDING_MAX])
            if not isinstance(recording, Recording):
                raise ValueError("not a recording")
        except (OSError, ValueError) as e:
            say(f"exportlens record: a process's recording is unreadable, left out: {str(e)[:200]}", err=True)
            continue
        for r in recording.records if isinstance(recording.records, tuple) else ():
            if _well_formed(r):
                out.setdefault(r.target, []).append(r)
    return out


def _well_formed(r: object) -> bool:
    """The codec rebuilt the records, but their fields are what the command's process wrote."""
    return (
        isinstance(r, Recorded)
        and isinstance(r.target, str)
        and isinstance(r.init, dict)
        and isinstance(r.unwritten, tuple)
        and all(isinstance(u, str) for u in r.unwritten)
        and isinstance(r.seen, int)
        and isinstance(r.calls, tuple)
        and len(r.calls) > 0
        and all(isinstance(c, Call) and isinstance(c.inputs, tuple) and all(map(_input, c.inputs)) for c in r.calls)
    )


def _input(pair: object) -> bool:
    if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], Seen)):
        return False
    seen = pair[1]
    return (
        isinstance(seen.kind, Kind)
        and isinstance(seen.dtype, str)
        and isinstance(seen.type_name, str)
        and isinstance(seen.shape, tuple)
        and all(type(n) is int and n >= 0 for n in seen.shape)
        and (seen.kind is not Kind.TENSOR or seen.value is None or _value_range(seen.value))
    )


def _value_range(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
