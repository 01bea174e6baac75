"""An untrusted workspace gets static features only: no user code runs until trust is granted."""

from __future__ import annotations

import psutil
import pytest
from lsprotocol import types

from .conftest import start, stop
from .raw import NET, PYPROJECT, Raw

WRITES = """\
from pathlib import Path

import torch

Path(__file__).with_name("imported.txt").write_text("user code ran")


class Writer(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        return x + 1
"""


@pytest.mark.slow
async def test_untrusted_runs_no_user_code_until_trust_is_granted(workspace):
    (workspace / "models/writer.py").write_text(WRITES)
    marker = workspace / "models/imported.txt"
    editor = await start(workspace, trusted=False, sandbox=False)  # the marker is written into the project: unconfined
    try:
        editor.open("models/writer.py")
        editor.save("models/writer.py")
        args = [{"uri": editor.uri("models/writer.py"), "target": "models/writer.py:Writer"}]
        assert (
            await editor.client.workspace_execute_command_async(
                types.ExecuteCommandParams("exportlens.exportModule", args)
            )
            is None
        )
        assert "not trusted" in editor.client.messages[-1].message
        # static features still work: the module is indexed and has its CodeLens
        lenses = await editor.client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(editor.uri("models/writer.py")))
        )
        assert [lens.command.title for lens in lenses] == ["▶ Export (workspace not trusted)"]
        status = await editor.status()
        assert status["exports_started"] == 0 and status["worker_pid"] is None
        assert not marker.exists()

        # the client grants trust: no restart, and the open module is exported
        editor.client.protocol.notify("exportlens/setTrusted", {"trusted": True})
        await editor.logged("models/writer.py:Writer: exported")
        assert marker.read_text() == "user code ran"
    finally:
        await stop(editor)


async def test_trust_fails_closed_on_anything_but_a_boolean(workspace):
    (workspace / "models/writer.py").write_text(WRITES)
    marker = workspace / "models/imported.txt"
    editor = await start(workspace, trusted="no")
    try:
        assert (await editor.status())["trusted"] is False
        for params in ({"trusted": "false"}, {}, {"trusted": 1}, None):
            editor.client.protocol.notify("exportlens/setTrusted", params)
        await editor.logged('exportlens/setTrusted needs {"trusted": true or false}, got None')
        assert (await editor.status())["trusted"] is False
        editor.open("models/writer.py")
        editor.save("models/writer.py")
        lenses = await editor.client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(editor.uri("models/writer.py")))
        )
        assert [lens.command.title for lens in lenses] == ["▶ Export (workspace not trusted)"]
        assert (await editor.status())["exports_started"] == 0 and not marker.exists()
        assert any(
            "initializationOptions.trusted = 'no' is not true or false" in m.message for m in editor.client.log_messages
        )
    finally:
        await stop(editor)


@pytest.mark.parametrize("trusted", [True, False])
@pytest.mark.slow
def test_the_warm_worker_starts_before_initialize_is_answered(tmp_path, trusted):
    """Issue 40: torch imports in the warm parent (no workspace code) from the server's start,
    not from `initialized` on; a workspace that initialize says is untrusted then has none."""
    (tmp_path / "net.py").write_text(NET)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    server = Raw(tmp_path)
    try:
        options = {"trusted": trusted}
        server.request(
            1, "initialize", {"capabilities": {}, "rootUri": tmp_path.as_uri(), "initializationOptions": options}
        )
        assert "result" in server.reply(1)
        server.request(2, "exportlens/status")  # before `initialized`: what the launch started
        early = server.reply(2)["result"]["worker_pid"]
        assert early is not None
        server.notify("initialized", {})
        server.request(3, "exportlens/status")
        now = server.reply(3)["result"]["worker_pid"]
        assert now == (early if trusted else None)  # kept (same python and jobs), or ended
        if not trusted:
            assert not psutil.pid_exists(early) or psutil.Process(early).status() == psutil.STATUS_ZOMBIE
    finally:
        server.stop()
