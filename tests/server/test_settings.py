"""Settings: bad values are reported and replaced by defaults; changes apply without a restart."""

from __future__ import annotations

import sys

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
        assert "exportlens: setting exportlens.exportOn = 'sometimes' must be one of save, change, manual; using 'save'" in warnings
        assert (
            "exportlens: setting exportlens.timeout = -1 must be a number of seconds above 0 and at most 604800 (a week);"
            " using the project's [tool.exportlens] value" in warnings
        )
        # an interpreter that is not there is refused when it is set, not found missing by a worker later
        assert (
            f"exportlens: setting exportlens.python = '/nonexistent' must be an interpreter: no such file; using {sys.executable!r}"
            in warnings
        )
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
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"exportlens": {"exportOn": "save"}}))
    await editor.logged("export_on='save'")
    editor.save("models/router.py")
    await editor.diagnostics("models/router.py", lambda ds: any(d.code == "EL101" for d in ds))
