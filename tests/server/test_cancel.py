"""Cancelling an export kills its process: by $/cancelRequest and by the progress's cancel button."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from .conftest import start, stop

SLOW = '''\
import time

import torch


class Slow(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        time.sleep(600)
        return x
'''


async def gone(pids: list[int], timeout: float = 10) -> None:
    for _ in range(int(timeout * 10)):
        if not any(Path(f"/proc/{p}").exists() and "Z" not in (Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[:1]) for p in pids):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"processes {pids} still alive")


async def running_job(editor) -> list[int]:
    """The pid of the export job's process, once it started."""
    await editor.logged("exporting models/slow.py:Slow")
    for _ in range(100):
        pid = next((j.pid for j in (await editor.status())["jobs"] if j.target == "models/slow.py:Slow"), None)
        if pid:
            assert Path(f"/proc/{pid}").exists()
            return [pid]
        await asyncio.sleep(0.1)
    raise AssertionError("the export job never started")


async def test_cancel_request_kills_the_export(workspace):
    (workspace / "models/slow.py").write_text(SLOW)
    editor = await start(workspace, exportOn="manual")
    try:
        editor.open("models/slow.py")
        args = [{"uri": editor.uri("models/slow.py"), "target": "models/slow.py:Slow"}]
        request = asyncio.ensure_future(editor.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams("exportlens.exportModule", args), msg_id="export-slow"))
        kids = await running_job(editor)
        editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id="export-slow"))
        await editor.logged("cancelling the export of models/slow.py:Slow")
        await gone(kids)
        assert (await editor.status())["running"] == []
        request.cancel()
    finally:
        await stop(editor)


async def test_progress_cancel_kills_the_export(workspace):
    (workspace / "models/slow.py").write_text(SLOW)
    editor = await start(workspace, exportOn="manual")
    try:
        editor.open("models/slow.py")
        args = [{"uri": editor.uri("models/slow.py"), "target": "models/slow.py:Slow"}]
        request = asyncio.ensure_future(editor.client.workspace_execute_command_async(types.ExecuteCommandParams("exportlens.exportModule", args)))
        kids = await running_job(editor)
        (token,) = [t for t, reports in editor.client.progress_reports.items() if reports]
        begin = editor.client.progress_reports[token][0]
        assert begin.cancellable and begin.message == "exporting Slow"
        editor.client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
        await gone(kids)
        assert await asyncio.wait_for(request, 10) is None  # the command ends without a result
        assert (await editor.status())["running"] == []
    finally:
        await stop(editor)
