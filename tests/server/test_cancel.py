"""Cancelling an export kills its process: by $/cancelRequest and by the progress's cancel button."""

from __future__ import annotations

import asyncio

import psutil
import pytest
import pytest_asyncio
from lsprotocol import types

from .conftest import start, stop

SLOW = """\
import time

import torch


class Slow(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        time.sleep(600)
        return x
"""


def alive(pid: int) -> bool:
    """Running (or stopped), asked of psutil: every system's answer. A zombie, exited and
    not yet reaped by its parent, is gone."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def gone(pids: list[int], timeout: float = 60) -> None:
    """Until each of ``pids`` has ended: a kill lands at once, its reaping a moment later on a loaded machine."""
    for _ in range(int(timeout * 10)):
        if not any(alive(p) for p in pids):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"processes {pids} still alive")


async def nothing_running(editor, timeout: float = 60) -> None:
    """Until the server lists no running export: it drops a cancelled one as its wait ends,
    a moment after the log line on a loaded machine."""
    end = asyncio.get_running_loop().time() + timeout
    while running := (await editor.status())["running"]:
        assert asyncio.get_running_loop().time() < end, f"still running: {running}"
        await asyncio.sleep(0.1)


async def running_job(editor) -> list[int]:
    """The pid of the export job's process, once it started."""
    await editor.logged("exporting models/slow.py:Slow")
    for _ in range(600):  # the first job waits for the warm worker: torch imports in seconds, more on a busy machine
        pid = next((j.pid for j in (await editor.status())["jobs"] if j.target == "models/slow.py:Slow"), None)
        if pid:
            assert alive(pid)
            return [pid]
        await asyncio.sleep(0.1)
    raise AssertionError("the export job never started")


@pytest_asyncio.fixture
async def slow(workspace):
    """An editor on a workspace whose models/slow.py sleeps in forward; exports only on demand."""
    (workspace / "models/slow.py").write_text(SLOW)
    editor = await start(workspace, exportOn="manual")
    editor.open("models/slow.py")
    yield editor
    await stop(editor)


def export_slow(editor, msg_id: str | None = None) -> asyncio.Future:
    """Run the export command as a client does (the request is sent at once)."""
    args = [{"uri": editor.uri("models/slow.py"), "target": "models/slow.py:Slow"}]
    params = types.ExecuteCommandParams("exportlens.exportModule", args)
    return asyncio.ensure_future(
        editor.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
    )


@pytest.mark.slow
async def test_cancel_request_kills_the_export(slow):
    request = export_slow(slow, msg_id="export-slow")
    kids = await running_job(slow)
    slow.client.protocol.notify("$/cancelRequest", types.CancelParams(id="export-slow"))
    await slow.logged("cancelling the export of models/slow.py:Slow")
    await gone(kids)
    await nothing_running(slow)
    request.cancel()


@pytest.mark.slow  # a server of its own (cancel by request stays in the quick loop)
async def test_progress_cancel_kills_the_export(slow):
    request = export_slow(slow)
    kids = await running_job(slow)
    (token,) = [t for t, reports in slow.client.progress_reports.items() if reports]
    begin = slow.client.progress_reports[token][0]
    assert begin.cancellable and begin.message == "exporting Slow"
    slow.client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    await gone(kids)
    assert await asyncio.wait_for(request, 10) is None  # the command ends without a result
    await nothing_running(slow)
