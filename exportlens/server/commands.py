"""Commands and requests the client runs: export a module now, lower it for a deployment
target now, create its spec, check the whole workspace, and show a module's exported program."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..exporter.core.program import program_text
from ..exporter.core.regular_files import plain_folders
from ..exporter.core.report import ModuleReport, Status
from ..exporter.core.settings import effective
from ..exporter.core.targets import Target
from . import compat, spec_create
from .methods import CHECK_WORKSPACE_REQUEST, CREATE_SPEC_COMMAND, EXPORT_COMMAND, LOWER_COMMAND, PROGRAM_REQUEST
from .progress import Progress
from .reasons import Why
from .server import ExportLensServer
from .snapshots import path_of

FIRST_SCAN_WAIT = 10.0  # seconds a request made right after start waits for the workspace's first scan


def _command_args(ls: ExportLensServer, args: Any) -> tuple[Path, Target, bool] | None:
    """(file, target, save) from ``{uri, target}``, or ``{uri, line}`` (0-based, as the
    editor's cursor) naming the module whose class holds that line. The one place a command's
    target enters as text: taken apart here, once."""
    arg = args[0] if isinstance(args, list) and args else args
    uri, target, line = compat.field_of(arg, "uri"), compat.field_of(arg, "target"), compat.field_of(arg, "line")
    save = compat.field_of(arg, "save", False)
    path = path_of(uri) if isinstance(uri, str) else None
    if path is None or not isinstance(save, bool):
        return None
    if target is None and isinstance(line, int) and not isinstance(line, bool) and line >= 0:
        if ls.session.index.get(path) is None:
            ls.rescan(path)
        module = ls.session.index.module_at(path, line + 1)
        return (path, Target.of(module), save) if module else None
    parsed = Target.parse(target) if isinstance(target, str) else None
    return (path, parsed, save) if parsed is not None and parsed.path else None


async def _first_scan(ls: ExportLensServer) -> None:
    """Wait, a bounded time, for the workspace's first scan: a request sent right after
    initialize would otherwise find no module, or none with a spec, where one is."""
    if ls.indexed.is_set():
        return
    try:
        await asyncio.wait_for(ls.indexed.wait(), FIRST_SCAN_WAIT)
    except asyncio.TimeoutError:
        ls.say(f"the workspace is still being indexed after {FIRST_SCAN_WAIT:.0f} s: answering from what is indexed")


async def module_named(
    ls: ExportLensServer, args: Any, what: str, *, valid: bool = True
) -> tuple[Path, Target, bool] | None:
    """(file, target, save) of the module command ``what`` names, once the workspace's first scan
    is in; None, said in the log, where ``args`` name none (or are not ``valid`` otherwise)."""
    await _first_scan(ls)
    parsed = _command_args(ls, args)
    if parsed is None or not valid:
        no_module(ls, what, args)
        return None
    return parsed


def may_run(ls: ExportLensServer, to_do: str) -> bool:
    """Whether a command may run the workspace's code now: the request's cancellation is
    wired to its task, and an untrusted workspace is told why nothing runs."""
    compat.cancel_task_with_request(ls)
    if not ls.session.trusted:
        ls.show(f"this workspace is not trusted, so its code is not run. Trust it to {to_do}.")
    return ls.session.trusted


def no_module(ls: ExportLensServer, what: str, args: Any) -> None:
    ls.say(
        f"{what} needs {{uri, target}} or {{uri, line}} inside an nn.Module class, got {args!r}",
        types.MessageType.Error,
    )
    ls.show("put the cursor inside an nn.Module class")


async def export_module(ls: ExportLensServer, args: Any = None) -> dict[str, Any] | None:
    """Export one module now: from its CodeLens, a code action, or any client. (A command
    sent with no ``arguments``, or null ones, is called with none: ``args`` is None.)"""
    parsed = await module_named(ls, args, EXPORT_COMMAND)
    if parsed is None or not may_run(ls, "export"):
        return None
    path, target, save = parsed
    root = ls.session.root_of(path)
    if ls.session.index.by_target(root, target) is None:
        ls.rescan(path)
    artifacts = _artifact_folder(ls, root, target) if save else None
    save = artifacts is not None
    try:
        reports = await ls.exports.export(root, [target], Why.COMMAND, artifacts=artifacts)
    except asyncio.CancelledError:  # $/cancelRequest: kill the job, not just the wait
        ls.exports.cancel(root, [target])
        raise
    report = reports.get(target)
    if report is None:
        return None
    if save:
        _say_saved(ls, report)
    return {
        "target": str(target),
        "status": report.status.value,
        "artifact": report.summary.artifact if report.summary else None,
        "findings": len(report.findings),
    }


async def lower_module(ls: ExportLensServer, args: Any = None) -> dict[str, Any] | None:
    """Lower one module for one deployment target now (``{uri, target, to}``: its "Compile for …"
    lens), with cancellable progress; exported first where its last export is not of its text."""
    to = compat.field_of(args[0] if isinstance(args, list) and args else args, "to")
    parsed = await module_named(ls, args, LOWER_COMMAND, valid=isinstance(to, str))
    if parsed is None or not may_run(ls, "compile"):
        return None
    path, target, _ = parsed
    root = ls.session.root_of(path)
    token = f"exportlens-{ls.session.next_number()}"
    cancel = lambda: ls.lowerings.cancel(root, target, to)  # noqa: E731
    progress = Progress(ls, token, [target], cancel, doing=f"compiling {{}} for {to}")
    await progress.create()
    progress.begin()
    try:
        lowered = await ls.lowerings.now(root, target, to)
    except asyncio.CancelledError:  # $/cancelRequest: kill the job, not just the wait
        cancel()
        raise
    finally:
        progress.end()
    if lowered is None:
        return None
    said = lowered.lowering
    numbers = {"seconds": said.seconds, "size": said.size, "max_error": said.max_error}
    return {"target": str(target), "to": to, "status": said.status, **numbers, "findings": len(lowered.findings)}


def _artifact_folder(ls: ExportLensServer, root: Path, target: Target) -> Path | None:
    """Where *Export to .pt2* saves ``target``'s program; None (and the user told why) where
    it saves none: the export still runs, its verdict is worth having."""
    if _on_meta(ls, root, target):
        ls.show(
            f"{target} is checked on meta, which holds no weights: a .pt2 saved from it would have none and fail when"
            ' run. Set device = "cpu" (or "cuda") in its table to save one,'
            " or use `exportlens export --allow-meta-weights`.",
            types.MessageType.Warning,
        )
        return None
    artifacts = root / ls.session.settings_at(root).artifact_folder
    if artifacts.is_relative_to(root) and not plain_folders(root, artifacts):
        # a link planted in the project (a cloned repo's .exportlens/artifacts -> ~/.ssh) would make
        # the export write, unconfined by the sandbox, wherever it leads
        ls.show(
            f"not saving a .pt2: {artifacts} leads through a link or a file; remove it to save",
            types.MessageType.Warning,
        )
        return None
    return artifacts


def _on_meta(ls: ExportLensServer, root: Path, target: Target) -> bool:
    module = ls.session.index.by_target(root, target)
    spec = ls.session.spec_of(root, module, ls.snapshot())[0] if module is not None else None
    return spec is not None and effective(spec.settings, ls.session.settings_at(root).overrides).device == "meta"


def _say_saved(ls: ExportLensServer, report: ModuleReport) -> None:
    """Where the .pt2 went, or why there is none."""
    if report.summary and report.summary.artifact:
        ls.show(f"saved {report.summary.artifact}", types.MessageType.Info)
    else:
        why = report.findings[0].message if report.findings else report.status.value
        ls.show(f"{report.target} did not export: {why}", types.MessageType.Error)


async def create_spec(ls: ExportLensServer, args: Any = None) -> bool:
    """Write the module's spec, proven by exporting it (spec_create.py), and show it."""
    parsed = await module_named(ls, args, CREATE_SPEC_COMMAND)
    if parsed is None:
        return False
    path, target, _ = parsed
    root = ls.session.root_of(path)
    module = ls.session.index.by_target(root, target)
    if module is None:
        return False
    return await spec_create.create_spec(ls, module, root, path)


async def exported_program(ls: ExportLensServer, params: Any) -> dict[str, Any] | None:
    """A module's exported program as text (what `exportlens show` prints), exporting it
    now; the result cache answers at once when nothing changed."""
    parsed = await module_named(ls, params, PROGRAM_REQUEST)
    if parsed is None:
        return None
    path, target, _ = parsed
    if not ls.session.trusted:
        return {
            "target": str(target),
            "status": Status.SKIPPED.value,
            "text": f"{target}\n  not exported: this workspace is not trusted, so its code is not run.\n",
        }
    root = ls.session.root_of(path)
    if ls.session.index.by_target(root, target) is None:
        ls.rescan(path)  # a file the scan has not reached yet
    if not ls.session.has_spec(root, [target], ls.snapshot())[target]:
        return {
            "target": str(target),
            "status": Status.SKIPPED.value,
            "text": f"{target}\n  needs example inputs: use Create export spec, or see docs/spec.md.\n",
        }
    try:
        report = (await ls.exports.export(root, [target], Why.COMMAND)).get(target)
    except asyncio.CancelledError:
        ls.exports.cancel(root, [target])
        raise
    if report is None:
        return None
    docs = ls.snapshot()
    text = program_text(report, lambda rel, line: docs.get(root / rel).lines.line(line - 1))
    return {"target": str(target), "status": report.status.value, "text": text}


async def check_workspace(ls: ExportLensServer, params: Any) -> dict[str, int] | None:
    """Export every module that has a spec, in every workspace folder; from then on, problems
    are published for files that are not open too (the Problems panel lists them all)."""
    if not ls.session.trusted:
        ls.show("this workspace is not trusted, so its code is not run. Trust it to check it.")
        return None
    await ls.indexed.wait()
    by_root: dict[Path, list[Target]] = {}
    for entry in list(ls.session.index.files.values()):
        by_root.setdefault(entry.root, []).extend(map(Target.of, entry.modules))
    ls.session.checked |= set(by_root)
    docs = ls.snapshot()
    batches = {
        root: [t for t, has in ls.session.has_spec(root, targets, docs).items() if has]
        for root, targets in by_root.items()
    }
    ls.say(
        f"checking the workspace: {sum(map(len, batches.values()))} modules with a spec in {len(batches)} project(s)"
    )
    try:
        landed = await asyncio.gather(
            *(ls.exports.export(root, targets, Why.CHECK) for root, targets in batches.items())
        )
    except asyncio.CancelledError:
        for root, targets in batches.items():
            ls.exports.cancel(root, targets)
        raise
    for root in batches:
        ls.publish_project(root)
    reports = [r for batch in landed for r in batch.values()]
    return {
        "modules": len(reports),
        "exported": sum(r.status is Status.EXPORTED for r in reports),
        "failed": sum(r.status is Status.FAILED for r in reports),
        "findings": sum(len(r.findings) for r in reports),
    }


def register(server: ExportLensServer) -> None:
    server.command(EXPORT_COMMAND)(export_module)
    server.command(CREATE_SPEC_COMMAND)(create_spec)
    server.command(LOWER_COMMAND)(lower_module)
    server.feature(PROGRAM_REQUEST)(exported_program)
    server.feature(CHECK_WORKSPACE_REQUEST)(check_workspace)
