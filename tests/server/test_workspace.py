"""What the VS Code extension's commands ask of the server: check the whole workspace
(problems in files that are not open), the exported program as text, the module under
the cursor, the status bar's counts, and the log level."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from .conftest import start, stop

ENCODER = "models/encoder.py"
ROUTER = "models/router.py"


def plain(result: Any) -> Any:
    """pygls hands results of custom requests over as namedtuples."""
    if hasattr(result, "_asdict"):
        return {k: plain(v) for k, v in result._asdict().items()}
    return result


def exports_counts(editor) -> list[dict[str, Any]]:
    return [plain(p) for p in editor.client.exports]


@pytest.mark.slow  # exports every module of the workspace
async def test_check_workspace_puts_problems_in_files_that_are_not_open(editor):
    summary = plain(await editor.client.protocol.send_request_async("exportlens/checkWorkspace", {}))
    assert summary == {"modules": 5, "exported": 1, "failed": 4, "findings": 4}, editor.client.log_messages[-12:]
    found = await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    (d,) = found
    assert d.range.start.line == 15 and "`routed > 0` depends on the values inside a tensor" in d.message
    await editor.diagnostics("models/head.py", lambda ds: [x.code for x in ds] == ["EL204"])
    assert exports_counts(editor)[-1] == {"running": 0, "exporting": [], "exported": 1, "failed": 4, "problems": 4}

    # closing a file the check found a problem in keeps its problem in the list
    editor.open(ROUTER)
    editor.client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(editor.uri(ROUTER)))
    )
    await editor.logged(f"{ROUTER}:TokenRouter: failed")
    assert [x.code for x in editor.client.diagnostics[editor.uri(ROUTER)]] == ["EL101"]


@pytest.mark.slow
async def test_the_status_bar_is_told_which_modules_are_exporting(editor):
    """A cold first export waits for torch to import (18-22 s on a loaded 2-core machine): the
    notification names what runs meanwhile, so the status bar can say more than a count."""
    editor.open(ROUTER)
    await editor.logged(f"{ROUTER}:TokenRouter: failed")
    while not editor.client.exports or plain(editor.client.exports[-1])["running"]:  # the verdict's counts follow
        await editor.client.wait_for_notification("exportlens/exports")
    counts = exports_counts(editor)
    assert {"running": 1, "exporting": [f"{ROUTER}:TokenRouter"], "exported": 0, "failed": 0, "problems": 0} in counts
    assert counts[-1] == {"running": 0, "exporting": [], "exported": 0, "failed": 1, "problems": 1}


async def test_the_exported_program_of_the_module_under_the_cursor(editor):
    line = editor.line_of(ENCODER, "h = self.embed(ids)")
    result = plain(
        await editor.client.protocol.send_request_async(
            "exportlens/program", {"uri": editor.uri(ENCODER), "line": line}
        )
    )
    assert result["target"] == "models/encoder.py:TinyEncoder" and result["status"] == "exported"
    text = result["text"]
    assert "signature: (ids: i64[batch, seq]) -> f32[batch, 32]" in text
    assert "batch ∈ [1, 64]" in text and "seq ∈ [2, 512]" in text
    assert "models/encoder.py:16  h = self.embed(ids)\n        -> f32[batch, seq, 32]" in text
    assert "graph:" in text and "class GraphModule" in text

    failed = plain(
        await editor.client.protocol.send_request_async(
            "exportlens/program", {"uri": editor.uri(ROUTER), "target": "models/router.py:TokenRouter"}
        )
    )
    assert failed["status"] == "failed" and "models/router.py:16: EL101" in failed["text"]

    # outside any class: no module, and the user is told where to put the cursor
    assert (
        await editor.client.protocol.send_request_async("exportlens/program", {"uri": editor.uri(ENCODER), "line": 0})
        is None
    )
    assert any("put the cursor inside an nn.Module class" in m.message for m in editor.client.messages)


@pytest.mark.slow
async def test_the_export_lens_writes_the_pt2(editor):
    editor.open(ENCODER)
    await editor.logged(f"{ENCODER}:TinyEncoder: exported")
    (lens,) = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(ENCODER)))
    )
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(lens.command.command, lens.command.arguments)
    )
    artifact = editor.root / ".exportlens/artifacts/TinyEncoder.pt2"
    assert artifact.stat().st_size > 0


@pytest.mark.slow
async def test_export_this_module_from_a_cursor_line(editor):
    line = editor.line_of(ENCODER, "pooled = h.mean(dim=1)")
    args = [{"uri": editor.uri(ENCODER), "line": line, "save": True}]
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams("exportlens.exportModule", args)
    )
    assert result["target"] == "models/encoder.py:TinyEncoder" and Path(result["artifact"]).is_file()
    # a flag that is not a boolean is refused, not read as true
    bad = [{"uri": editor.uri(ENCODER), "line": line, "save": "no"}]
    assert (
        await editor.client.workspace_execute_command_async(types.ExecuteCommandParams("exportlens.exportModule", bad))
        is None
    )


async def test_the_export_lens_on_meta_saves_no_weightless_pt2(editor):
    await editor.configure(device="meta")
    line = editor.line_of(ENCODER, "pooled = h.mean(dim=1)")
    args = [{"uri": editor.uri(ENCODER), "line": line, "save": True}]
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams("exportlens.exportModule", args)
    )
    assert result["status"] == "exported" and result["artifact"] is None
    assert any("is checked on meta, which holds no weights" in m.message for m in editor.client.messages)
    assert not (editor.root / ".exportlens/artifacts/TinyEncoder.pt2").exists()


async def test_an_artifact_folder_that_is_a_link_is_not_written_through(editor, tmp_path):
    """A link planted in the project (a cloned repo's .exportlens/artifacts -> ~/.ssh) would have
    the export write wherever it leads, and the sandbox make that folder writable."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = editor.root / ".exportlens/artifacts"
    kept = folder.with_name("artifacts.kept")
    if folder.exists():
        folder.rename(kept)
    folder.parent.mkdir(exist_ok=True)
    folder.symlink_to(elsewhere, target_is_directory=True)
    try:
        line = editor.line_of(ENCODER, "pooled = h.mean(dim=1)")
        args = [{"uri": editor.uri(ENCODER), "line": line, "save": True}]
        result = await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams("exportlens.exportModule", args)
        )
        assert result["status"] == "exported" and result["artifact"] is None
        assert any(
            "not saving a .pt2" in m.message and "leads through a link" in m.message for m in editor.client.messages
        )
        assert list(elsewhere.iterdir()) == []
    finally:
        folder.unlink()
        if kept.exists():
            kept.rename(folder)


@pytest.mark.slow
async def test_log_level_error_keeps_the_log_quiet(editor):
    await editor.configure(logLevel="error")
    quiet_from = len(editor.client.log_messages)
    editor.open(ENCODER)
    status = await editor.status()
    assert status["settings"].log_level == "error"
    await editor.client.protocol.send_request_async("exportlens/checkWorkspace", {})
    assert not [m for m in editor.client.log_messages[quiet_from:] if m.type == types.MessageType.Log]


async def test_a_folder_removed_from_the_workspace_takes_its_problems_with_it(editor):
    await editor.client.protocol.send_request_async("exportlens/checkWorkspace", {})
    await editor.diagnostics(ROUTER, lambda ds: [d.code for d in ds] == ["EL101"])
    folder = types.WorkspaceFolder(editor.root.resolve().as_uri(), editor.root.name)
    change = types.WorkspaceFoldersChangeEvent
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(change(added=[], removed=[folder]))
    )
    await editor.diagnostics(ROUTER, lambda ds: ds == [])
    assert (await editor.status())["modules_indexed"] == 0
    assert exports_counts(editor)[-1] == {"running": 0, "exporting": [], "exported": 0, "failed": 0, "problems": 0}
    # added back, it is scanned again
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(change(added=[folder], removed=[]))
    )
    await editor.logged(f"serving {editor.root.resolve()} too")
    editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: [d.code for d in ds] == ["EL101"])


@pytest.mark.slow
async def test_the_program_asked_for_right_after_start_waits_for_the_first_scan(workspace):
    """Asked before the workspace's first scan is done, the request waits for it (a bounded
    time), rather than answering that a module with a spec needs example inputs."""
    editor = await start(workspace)
    try:
        asked = {"uri": editor.uri(ENCODER), "target": "models/encoder.py:TinyEncoder"}
        result = plain(await editor.client.protocol.send_request_async("exportlens/program", asked))
        assert result["status"] == "exported", result["text"]
        assert "signature: (ids: i64[batch, seq]) -> f32[batch, 32]" in result["text"]
    finally:
        await stop(editor)
