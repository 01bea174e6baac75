"""Commands the client runs: export a module now, create its spec."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from .base import ExportLensServer, field_of, path_of, server
from .features import actions


def _command_args(args: Any) -> tuple[Path, str, bool] | None:
    arg = args[0] if isinstance(args, list) and args else args
    uri, target = field_of(arg, "uri"), field_of(arg, "target")
    path = path_of(uri) if isinstance(uri, str) else None
    if path is None or not isinstance(target, str):
        return None
    return path, target, bool(field_of(arg, "save", False))


def _cancel_with_request(ls: ExportLensServer) -> None:
    """Let $/cancelRequest reach this command's task. pygls 2.1.1 runs commands through a
    generator and cancels only the request's outer future, never the task doing the work."""
    request = ls.protocol._request_futures.get(ls.protocol.msg_id)
    task = asyncio.current_task()
    if request is not None and task is not None:
        request.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)


@server.command(actions.EXPORT_COMMAND)
async def export_module(ls: ExportLensServer, args: Any) -> dict[str, Any] | None:
    """Export one module now: from its CodeLens, a code action, or any client."""
    parsed = _command_args(args)
    if parsed is None:
        ls.say(f"{actions.EXPORT_COMMAND} needs {{uri, target}}, got {args!r}", types.MessageType.Error)
        return None
    path, target, save = parsed
    _cancel_with_request(ls)
    if not ls.session.trusted:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, "exportlens: this workspace is not trusted, so its code is not run. Trust it to export."))
        return None
    root = ls.session.root_of(path)
    if ls.session.index.by_target(root, target) is None:
        ls.rescan(path)
    artifacts = (root / ls.session.settings.artifact_folder) if save else None
    try:
        reports = await ls.exports.export(root, [target], "command", artifacts=artifacts)
    except asyncio.CancelledError:  # $/cancelRequest: kill the job, not just the wait
        ls.exports.cancel(root, [target])
        raise
    report = reports.get(target)
    if report is None:
        return None
    if save and report.summary and report.summary.artifact:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"exportlens: saved {report.summary.artifact}"))
    elif save:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"exportlens: {target} did not export: {report.findings[0].message if report.findings else report.status.value}"))
    return {"target": target, "status": report.status.value, "artifact": report.summary.artifact if report.summary else None, "findings": len(report.findings)}


@server.command(actions.CREATE_SPEC_COMMAND)
async def create_spec(ls: ExportLensServer, args: Any) -> bool:
    parsed = _command_args(args)
    if parsed is None:
        return False
    path, target, _ = parsed
    root = ls.session.root_of(path)
    module = ls.session.index.by_target(root, target)
    edit = ls.spec_edit(root, path, module) if module else None
    if edit is None:
        return False
    result = await asyncio.shield(ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit, label=f"Create export spec for {module.name}")))
    return bool(result and result.applied)


