"""Which submodule breaks, in the editor: the command exports each submodule in the server's
pool and answers the tree, each failure on its line; cancelling it kills its process; a
client that shows trees gets a CodeLens for it above a module that fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from test_tree import NET, SPEC  # tests/test_tree.py: the CLI's model, one bad attention block three levels down

from .conftest import capabilities, start, stop
from .test_cancel import SLOW, gone

NET_FILE = "models/net.py"
TARGET = f"{NET_FILE}:Net"


@pytest.fixture
def net(workspace: Path) -> Path:
    """The examples with models/net.py and its table (written before the server indexes them)."""
    (workspace / NET_FILE).write_text(NET)
    spec = workspace / "pyproject.toml"
    spec.write_text(spec.read_text() + SPEC.replace('"net.py:Net"', f'"{TARGET}"'))
    (workspace / "models/slow.py").write_text(SLOW)
    return workspace


def tree_of(editor, rel: str, target: str, msg_id: str | None = None) -> asyncio.Future:
    params = types.ExecuteCommandParams("exportlens.submoduleTree", [{"uri": editor.uri(rel), "target": target}])
    return asyncio.ensure_future(
        editor.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
    )


def plain(value):
    """pygls hands a custom result over as namedtuples: plain dicts and lists again."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@pytest.mark.slow
async def test_the_tree_names_the_bad_block_on_its_line_and_its_siblings_export(net, editor):
    tree = plain(await asyncio.wait_for(tree_of(editor, NET_FILE, TARGET), 300))
    assert tree["target"] == TARGET and tree["to_fix"] == ["encoder.blocks.1.attn"]
    nodes = {n["path"]: n for n in tree["nodes"]}
    bad = nodes["encoder.blocks.1.attn"]
    assert (bad["cls"], bad["verdict"]) == ("MaskedAttention", "fails")
    problem = bad["problem"]
    assert problem["code"] == "EL101" and problem["uri"] == editor.uri(NET_FILE)
    assert problem["message"].startswith("`mask.sum() > 0` is a tensor")
    line = editor.line_of(NET_FILE, "if mask.sum() > 0:")
    assert problem["range"]["start"] == {"line": line, "character": 11}
    # its parents fail with it; its siblings and its own children export
    assert {p for p, n in nodes.items() if n["verdict"] == "fails"} == {"", "encoder", "encoder.blocks.1", bad["path"]}
    for sibling in ("encoder.blocks.0.attn", "encoder.blocks.1.mlp", "encoder.blocks.1.attn.qkv", "head"):
        assert (nodes[sibling]["verdict"], nodes[sibling]["problem"]) == ("exported", None), sibling
    assert nodes["encoder.blocks.2"]["same_as"] == "encoder.blocks.0"
    assert nodes["encoder.unused"]["verdict"] == "not-called"
    assert tree["carried"] == ["batch", "seq"] and tree["findings"] == []
    # it ran with a progress the user can cancel
    begins = [r[0] for r in editor.client.progress_reports.values() if r]
    assert any(b.message == "exporting each submodule of Net" and b.cancellable for b in begins)


async def running(editor, target: str) -> int:
    """The pid of the tree job's process, once it started (after the warm worker's start)."""
    await editor.logged(f"submodule tree of {target}: exporting each submodule")
    for _ in range(600):
        pid = next((j.pid for j in (await editor.status())["jobs"] if j.target == target), None)
        if pid:
            return pid
        await asyncio.sleep(0.1)
    raise AssertionError("the tree's job never started")


async def no_jobs_of(editor, root: Path, timeout: float = 60) -> None:
    """Until the status lists no job of ``root``'s project: the pool drops a killed job once it
    has seen its process end, a moment after the process is gone on a loaded machine. (The
    server is shared: another test's background work may still be running in it.)"""
    end = asyncio.get_running_loop().time() + timeout
    while jobs := [j for j in (await editor.status())["jobs"] if Path(j.root).resolve() == root.resolve()]:
        assert asyncio.get_running_loop().time() < end, f"jobs of {root} still running: {jobs}"
        await asyncio.sleep(0.1)


async def test_cancelling_the_tree_kills_its_process(net, editor):
    request = tree_of(editor, "models/slow.py", "models/slow.py:Slow", msg_id="tree-slow")
    pid = await running(editor, "models/slow.py:Slow")
    editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id="tree-slow"))
    await editor.logged("submodule tree of models/slow.py:Slow: cancelled")
    await gone([pid])
    await no_jobs_of(editor, net)
    request.cancel()


async def test_the_progress_cancel_button_kills_the_tree_and_it_answers_null(net, editor):
    before = set(editor.client.progress_reports)  # the shared server's earlier progress is other tests'
    request = tree_of(editor, "models/slow.py", "models/slow.py:Slow")
    pid = await running(editor, "models/slow.py:Slow")
    for _ in range(600):  # the job may start before the progress's begin reaches the client
        tokens = [t for t, r in editor.client.progress_reports.items() if t not in before and r]
        if tokens:
            break
        await asyncio.sleep(0.1)
    (token,) = tokens
    assert editor.client.progress_reports[token][0].message == "exporting each submodule of Slow"
    editor.client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    await gone([pid])
    assert await asyncio.wait_for(request, 60) is None
    await no_jobs_of(editor, net)


@pytest.mark.slow  # a server of its own: the lens is only for a client that shows trees
async def test_a_client_that_shows_trees_gets_the_lens_above_a_failing_module(workspace):
    caps = capabilities()
    caps.experimental = {"exportlensSubmoduleTree": True}
    editor = await start(workspace, caps=caps)
    try:
        for rel in ("models/router.py", "models/encoder.py"):
            editor.open(rel)
        await editor.logged("models/router.py:TokenRouter: failed")
        await editor.logged("models/encoder.py:TinyEncoder: exported")
        lenses = {}
        for rel in ("models/router.py", "models/encoder.py"):
            found = await editor.client.text_document_code_lens_async(
                types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(rel)))
            )
            lenses[rel] = [(lens.command.title, lens.command.command) for lens in found]
        assert lenses["models/router.py"] == [
            ("✗ 1 problem", "exportlens.exportModule"),
            ("Which submodule breaks?", "exportlens.submoduleTree"),
        ]
        assert [title for title, _ in lenses["models/encoder.py"]] != [] and all(
            command != "exportlens.submoduleTree" for _, command in lenses["models/encoder.py"]
        )
    finally:
        await stop(editor)
