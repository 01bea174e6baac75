"""``exportlens check | init | export | show | tree | merge``: the engine for terminals and CI.

Exit codes: 0 everything checked exports, 1 a finding of severity error,
2 a usage or configuration error, or a check that checked nothing where that was to fail
(``--fail-on-empty``; by default for ``--format github`` and ``sarif``, CI's formats).
"""

import sys

# First, before any other import: `python -m exportlens.cli` (and a PYTHONPATH with an empty
# entry) put the current folder first on sys.path, where an editor starting the server puts
# the workspace. No `from __future__` here either: that too is an import. (docs/server.md)
from .isolation import forget_current_folder

forget_current_folder()

import argparse
import gc
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__, diff, record
from .cli_settings import add_settings, overrides, validated
from .exporter.core import codes
from .exporter.core.options import Options, Task
from .exporter.core.program import program_text
from .exporter.core.report import ModuleReport, Report, Status, report_json
from .exporter.core.settings import effective
from .exporter.core.shards import Shard
from .exporter.core.sources import read_text
from .exporter.core.targets import Target
from .merge import MergeError, in_target_order, merge, read_report
from .printed import CI_FORMATS, NOTHING_CHECKED, checked_nothing, located, print_text, relative, say, summary

if TYPE_CHECKING:  # imported where used: `--help` and a mistyped option answer before libcst loads
    from .exporter.spec.plan import Plan, Planned
    from .exporter.workers.pool import Pool
    from .projects import Project

USAGE, FOUND, OK = 2, 1, 0


def _common(q: argparse.ArgumentParser, command: str) -> None:
    """The options every command that exports takes: its settings (core.settings), and the cache's."""
    add_settings(q, command)
    q.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor keep what earlier runs learned: verdicts, and the index of the project's files"
        " (kept in .exportlens/cache beside pyproject.toml)",
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="exportlens",
        description="Does each nn.Module export with torch.export? If not, which line of yours breaks it.",
    )
    p.add_argument("--version", action="version", version=f"exportlens {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    _check_parser(sub.add_parser("check", help="check every nn.Module under PATHs (default: .)"))

    export = sub.add_parser("export", help="export one module and save the .pt2")
    export.add_argument("target", help="path.py:Class, or path.py holding one module")
    export.add_argument("-o", "--output", type=Path, help="where to write the .pt2 (default: ./Class.pt2)")
    export.add_argument(
        "--allow-meta-weights",
        action="store_true",
        help="save the .pt2 of a module on meta, whose weights it does not hold",
    )
    _common(export, "export")

    show = sub.add_parser("show", help="signature, range constraints, per-line shapes and graph of one module")
    show.add_argument("target", help="path.py:Class, or path.py holding one module")
    show.add_argument("--no-graph", action="store_true", help="leave out the exported graph")
    _common(show, "show")

    _tree_parser(sub)

    init = sub.add_parser(
        "init", help="write a spec, proven by exporting it, for every module under PATHs that has none"
    )
    init.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    init.add_argument("--dry-run", action="store_true", help="print the diff of pyproject.toml instead of writing it")
    _common(init, "init")
    record.add_parser(sub)
    diff.add_parser(sub)

    _merge_parser(sub)
    sub.add_parser("serve", help="run the language server over stdio (for editors)")
    return p


def _check_parser(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    check.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="github: GitHub Actions annotations",
    )
    check.add_argument(
        "--first-only",
        action="store_true",
        help="verdicts only: each module's first problem; no draft export, bounds run, fix proofs or lowering",
    )
    check.add_argument(
        "--module", action="append", default=[], help="only this module (path.py:Class or Class); repeatable"
    )
    check.add_argument(
        "--shard",
        type=validated("shard", check_value=Shard.parse),
        metavar="K/N",
        help=(
            "only shard K of N (like 2/3): a module's shard is a hash of its path.py:Class;"
            " `exportlens merge` joins the reports"
        ),
    )
    check.add_argument(
        "--fail-on-empty",
        action="store_true",
        help=(
            "exit 2 when no module was checked (none has example inputs);"
            " the default for --format github and sarif, but for a shard"
        ),
    )
    _common(check, "check")


def _tree_parser(sub: "argparse._SubParsersAction") -> None:
    help = "export each submodule of one module: which ones fail, the smallest first, each on its line"
    tree = sub.add_parser("tree", help=help)
    tree.add_argument("target", help="path.py:Class, or path.py holding one module")
    tree.add_argument("--format", choices=("text", "json"), default="text")
    _common(tree, "tree")


def _merge_parser(sub: "argparse._SubParsersAction") -> None:
    help = "combine the JSON reports of `check --format json` (its shards) into one report"
    merged = sub.add_parser("merge", help=help)
    merged.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    merged.add_argument("--format", choices=("json", "sarif", "github"), default="json")
    merged.add_argument("-o", "--output", type=Path, metavar="OUT", help="write the report here (default: stdout)")
    merged.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the project root the reports' paths are relative to (SARIF; default: .)",
    )


def main(argv: list[str] | None = None) -> int:
    # a console's code page (Windows' cp1252) has no `∈`: escape what it cannot encode, and keep
    # its encoding for the rest (a path's `é` stays as the console shows it)
    for stream in (sys.stdout, sys.stderr):
        getattr(stream, "reconfigure", lambda **_: None)(errors="backslashreplace")
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from .server.launch import main as serve  # the warm parent starts before the server's imports

        serve()
        return OK
    # a command makes an object or more per module found and frees few before it exits: the
    # collector, at its default threshold, would walk them over and over (mypy does the same)
    gc.set_threshold(200_000, 30, 30)
    commands = {"check": _check, "export": _export, "show": _show, "tree": _tree, "merge": _merge, "init": _init}
    return {**commands, "record": record.command, "diff": diff.command}[args.command](args)


def _options(args: argparse.Namespace, **kwargs) -> Options:
    return Options(overrides=overrides(args), **kwargs)


def _pool(args: argparse.Namespace, jobs: int = 1) -> "Pool":
    """Workers for this run. Every module runs in its own worker process: the user's code
    never runs in this one. The workers (and torch) start with the first module that no
    earlier run's verdict answers: an unchanged project never starts them."""
    from .exporter.workers.pool import Pool

    return Pool(args.python, jobs, persist=not args.no_cache)


def _run(args: argparse.Namespace, pool: "Pool", plan: "Plan", options: Options, verdicts: bool = False) -> Report:
    from .exporter.workers.batch import export_in_workers

    task = Task.VERDICT if verdicts else Task.SERVE  # verdicts only: no bounds run, proofs or lowering
    return export_in_workers(plan, pool, options, task=task, prove_fixes=not verdicts, lower=not verdicts)


def _projects(paths: list[Path], only: set[str] | None = None, cache: bool = True) -> "list[Project] | None":
    """The plan of each project the paths reach (a folder with its own pyproject.toml is its own: projects.py)."""
    from .projects import projects

    missing = [p for p in paths if not p.exists()]
    if missing:
        say(f"exportlens: no such file or folder: {', '.join(map(str, missing))}", err=True)
        return None
    found = projects(paths, only, cache=cache)
    # the plans live as long as this process: the collector need not walk them again and again
    # (a third of a check that only reports skipped modules)
    gc.freeze()
    broken = [(p.plan.root, f) for p in found for f in p.plan.findings if f.code == codes.SPEC_TOML.code]
    for root, f in broken:
        print(located(root, f), file=sys.stderr)
    names = (
        {n for p in found for m in p.plan.modules for n in (p.shown(m.target), m.target, m.module.name)}
        if only
        else set()
    )
    unmatched = sorted((only or set()) - names)
    if unmatched and not broken:
        every = ", ".join(p.shown(m.target) for p in projects(paths, cache=cache) for m in p.plan.modules) or "none"
        say(f"exportlens: --module {', '.join(unmatched)} names no nn.Module here (found: {every})", err=True)
    return None if broken or unmatched else found


def _check(args: argparse.Namespace) -> int:
    from .projects import joined_report

    with _pool(args, args.jobs) as pool:
        pool.warm_unless_kept(args.paths)  # torch imports in the warm parent while this plans
        found = _projects(args.paths, set(args.module) or None, not args.no_cache)
        if found is None:
            return USAGE
        shard = (args.shard, sum(len(p.plan.modules) for p in found)) if args.shard else None
        for p in found if args.shard else ():
            p.plan.modules = [m for m in p.plan.modules if args.shard.holds(p.shown(m.target))]
        first = args.first_only  # verdicts only: no draft export (nor, ``_run``, bounds run, proofs or lowering)
        options = _options(args, collect_all=not first)
        report, hidden = joined_report(found, lambda plan: _run(args, pool, plan, options, first), judge=not first)
        report = in_target_order(report)
    root = found[0].plan.root
    if args.format == "text":
        print_text(root, report, shard, hidden)
    else:
        print(_rendered(report, args.format, root, hidden, shard))
    # only where code ran (a cached verdict ran none): asking the kernel is not free
    if any(m.status is not Status.SKIPPED and not m.cached for m in report.modules):
        _say_if_unconfined(args)
    if checked_nothing(report) and (args.fail_on_empty or (args.format in CI_FORMATS and not args.shard)):
        say(f"exportlens: {NOTHING_CHECKED}", err=True)
        return USAGE
    return report.exit_code


def _say_if_unconfined(args: argparse.Namespace) -> None:
    """Plainly, where the sandbox is off (macOS, Windows, a kernel without Landlock)."""
    from .exporter.workers.sandbox import off_here

    if args.sandbox is not False and (why := off_here()):
        say(f"exportlens: the exports ran unconfined, with your user's rights: {why}", err=True)


def _init(args: argparse.Namespace) -> int:
    from .init import run

    with _pool(args, os.cpu_count() or 1) as pool:
        found = _projects(args.paths, cache=not args.no_cache)
        return USAGE if found is None else run(found, pool, dry_run=args.dry_run)


def _rendered(report: Report, format: str, root: Path, hidden: int = 0, shard: tuple[Shard, int] | None = None) -> str:
    """The report as ``check --format json``, ``sarif`` or ``github`` prints it (``merge`` too)."""
    if format == "github":
        from .github import commands

        found = commands(report.all_findings, lambda path: relative(root, path))
        return "\n".join([*found, summary(report, len(found), shard, hidden)])
    if format == "sarif":
        from .sarif import to_sarif

        return json.dumps(to_sarif(report, root.resolve().as_uri()), ensure_ascii=False, indent=2)
    return json.dumps(report_json(report), ensure_ascii=False, indent=2)


def _merge(args: argparse.Namespace) -> int:
    try:
        report = merge((str(path), read_report(path)) for path in args.reports)
    except MergeError as e:
        say(f"exportlens: {e}", err=True)
        return USAGE
    text = _rendered(report, args.format, args.root)
    empty = checked_nothing(report) and args.format in CI_FORMATS
    if args.output is None:
        print(text)
        return USAGE if empty else report.exit_code
    try:
        args.output.write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        say(f"exportlens: cannot write {args.output}: {e.strerror or e}", err=True)
        return USAGE
    say(f"{args.output}: {summary(report, len(report.all_findings))}")
    return USAGE if empty else report.exit_code


def _one(target: str, cache: bool = True) -> "tuple[Plan, Planned] | None":
    """Resolve ``path.py:Class`` (or a file with one module) to its planned module."""
    where = Target.parse(target)
    path_text, name = where.path, where.name
    path = Path(path_text)
    if not path.is_file():
        say(f"exportlens: no such file: {path_text}", err=True)
        return None
    if not (reached := _projects([path], cache=cache)):
        return None
    plan = reached[0].plan
    matches = [m for m in plan.modules if not name or m.module.name == name]
    if len(matches) != 1:
        found = ", ".join(m.module.name for m in plan.modules) or "none"
        what = f"no nn.Module {name!r}" if name else "more than one nn.Module"
        say(f"exportlens: {what} in {path_text} (found: {found}); name one as {path_text}:Class", err=True)
        return None
    return plan, matches[0]


def _single(args: argparse.Namespace, artifact: Path | None) -> "tuple[Plan, ModuleReport] | int":
    with _pool(args) as pool:
        found = _one(args.target, not args.no_cache)
        if found is None:
            return USAGE
        plan, planned = found
        plan.modules = [planned]
        (report,) = _run(args, pool, plan, _options(args, artifact=artifact)).modules
    for f in report.findings:
        print(located(plan.root, f), file=sys.stderr)
        for fix in f.fixes:
            say(f"    fix: {fix.title}", err=True)
    return plan, report


def _export(args: argparse.Namespace) -> int:
    found = _one(args.target, not args.no_cache)
    if found is None:
        return USAGE
    if found[1].spec is not None and _device(args, found[1].spec) == "meta" and not args.allow_meta_weights:
        say(
            f"exportlens: {found[1].target} is exported on meta, which holds no weights:"
            " its .pt2 would have none and fail when run (Tensor device mismatch)."
            " Export with real weights with --device cpu (or cuda), or save it anyway with --allow-meta-weights",
            err=True,
        )
        return USAGE
    named = args.output or Path(f"{found[1].module.name}.pt2")
    output = named.parent.resolve() / named.name  # a link at the name itself is replaced, never followed
    got = _single(args, output)
    if isinstance(got, int):
        return got
    _, report = got
    if report.status is not Status.EXPORTED or report.summary is None or report.summary.artifact is None:
        return FOUND
    say(f"exported {report.target} in {report.seconds:.2f} s: {report.summary.signature}")
    say(f"saved {os.path.relpath(report.summary.artifact)}")
    return OK


def _device(args: argparse.Namespace, spec) -> str:
    return effective(spec.settings, _options(args).overrides).device


def _show(args: argparse.Namespace) -> int:
    got = _single(args, None)
    if isinstance(got, int):
        return got
    plan, report = got
    if report.status is not Status.EXPORTED or report.summary is None:
        return FOUND
    say(program_text(report, lambda path, line: _source(plan.root / path, line), graph=not args.no_graph), end="")
    return OK


def _tree(args: argparse.Namespace) -> int:
    from .exporter.workers.trees import tree_in_worker
    from .treeprint import tree_json, tree_text

    with _pool(args) as pool:
        found = _one(args.target, not args.no_cache)
        if found is None:
            return USAGE
        plan, planned = found
        tree = tree_in_worker(plan, planned, pool, _options(args))
    if not tree.nodes and not tree.findings:  # a module another one builds, without inputs of its own
        say(f"exportlens: {planned.target} has no example inputs (`exportlens init` writes them)", err=True)
        return USAGE
    print(tree_text(plan.root, tree) if args.format == "text" else tree_json(tree))
    _say_if_unconfined(args)
    return tree.exit_code


def _source(path: Path, line: int) -> str:
    lines = read_text(path).splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


if __name__ == "__main__":
    sys.exit(main())
