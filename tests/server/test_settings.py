"""Settings: bad values are reported and replaced by defaults; changes apply without a restart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import start, stop


async def test_a_bad_setting_is_reported_and_the_default_used(workspace):
    editor = await start(workspace, exportOn="sometimes", timeout=-1, python="/nonexistent", jobs=0)
    try:
        await editor.logged("serving")
        status = await editor.status()
        assert status["settings"].export_on == "save"
        assert status["settings"].timeout is None
        warnings = [m.message for m in editor.client.log_messages if m.type == types.MessageType.Warning]
        assert (
            "exportlens: setting exportlens.exportOn = 'sometimes' must be one of save, change, manual; using 'save'"
            in warnings
        )
        assert (
            "exportlens: setting exportlens.timeout = -1 must be a number of seconds above 0"
            " and at most 604800 (a week); using the project's [tool.exportlens] value" in warnings
        )
        # an interpreter that is not there is refused when it is set, not found missing by a worker later
        assert (
            "exportlens: setting exportlens.python = '/nonexistent' must be an interpreter: no such file;"
            f" using {sys.executable!r}"
        ) in warnings
        assert "exportlens: setting exportlens.jobs = 0 must be a whole number ≥ 1; using 2" in warnings
        assert status["settings"].python == sys.executable
    finally:
        await stop(editor)


async def test_manual_mode_exports_only_on_demand_and_a_setting_change_takes_effect(editor):
    await editor.configure(exportOn="manual")
    before = (await editor.status())["exports_started"]
    editor.open("models/router.py")
    editor.save("models/router.py")
    assert (await editor.status())["exports_started"] == before
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"exportlens": {"exportOn": "save"}})
    )
    await editor.logged("export_on='save'")
    editor.save("models/router.py")
    await editor.diagnostics("models/router.py", lambda ds: any(d.code == "EL101" for d in ds))


@pytest.mark.slow
async def test_a_workspace_folder_s_own_settings_apply_to_its_projects(workspace):
    """VS Code's resource-scoped settings: the server asks for each folder's, and a folder's
    artifact folder (and device, strict, ir, timeout, memory limit, sandbox) are its own."""
    editor = await start(workspace)
    try:
        folder = workspace.resolve()
        editor.client.set_configuration({"exportlens": {"exportOn": "save"}})
        own = {"exportOn": "save", "artifactFolder": "out/pt2", "device": "tpu", "jobs": 0}  # jobs: the window's alone
        editor.client.set_configuration({"exportlens": own}, scope_uri=folder.as_uri())
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await editor.logged(f"settings of {folder}: ")
        warnings = [m.message for m in editor.client.log_messages if m.type == types.MessageType.Warning]
        assert (
            f"exportlens: {folder}: setting exportlens.device = 'tpu'"
            " must be one of cpu, cuda, cuda:N, mps, meta (N at most 1023);"
        ) in (" ".join(warnings))
        assert not any("exportlens.jobs" in w for w in warnings)
        line = editor.line_of("models/encoder.py", "pooled = h.mean(dim=1)")
        args = [{"uri": editor.uri("models/encoder.py"), "line": line, "save": True}]
        result = await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams("exportlens.exportModule", args)
        )
        assert Path(result["artifact"]) == folder / "out/pt2/TinyEncoder.pt2" and Path(result["artifact"]).is_file()
    finally:
        await stop(editor)
