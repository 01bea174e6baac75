"""Nothing of the workspace is imported by exportlens's own processes, whatever folder they
start in: each is started from inside a workspace full of files named like the modules it
imports (conftest), the way editors start the server there, and none of those files runs,
trusted or not, while what the user sees is still right."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server.conftest import start, stop

from exportlens.server.index.scanner import Indexer, scan_one

from .conftest import Shadowed

# how Neovim, Helix and Emacs are told to start it, and how the tests and the VS Code extension do
CONSOLE_SCRIPT = Path(sys.executable).with_name("exportlens")
SERVERS = {
    "python -m": [sys.executable, "-m", "exportlens.cli", "serve"],
    "console script": [str(CONSOLE_SCRIPT), "serve"],
}


def test_the_indexer_and_the_large_file_parser_import_nothing_from_the_folder_they_start_in(
    shadowed: Shadowed, monkeypatch
):
    monkeypatch.chdir(shadowed.root)  # as the server starts them: from its own current folder
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep + "/nonexistent"
    )  # `export PYTHONPATH=$PYTHONPATH:...`: an empty entry is "."
    found, done = {}, asyncio.Event()
    loop = asyncio.new_event_loop()
    try:
        indexer = Indexer(
            shadowed.root,
            lambda path, entry: found.setdefault(path, entry),
            lambda n: loop.call_soon_threadsafe(done.set),
        )
        loop.run_until_complete(asyncio.wait_for(done.wait(), 60))
        indexer.stop()
        head = shadowed.root / "models/head.py"
        entry = loop.run_until_complete(scan_one(head, head.read_text(), [shadowed.root]))
    finally:
        loop.close()
    assert shadowed.imported() == []
    modules = {m.target for e in found.values() for m in e.modules}
    assert modules == {
        f"models/{f}"
        for f in (
            "encoder.py:TinyEncoder",
            "fusion.py:GatedFusion",
            "head.py:ClassifierHead",
            "positional.py:LearnedPositions",
            "router.py:TokenRouter",
        )
    }
    assert [m.target for m in entry.modules] == ["models/head.py:ClassifierHead"]


@pytest.mark.parametrize("how", SERVERS)
@pytest.mark.slow
async def test_an_untrusted_server_started_in_the_workspace_imports_nothing_from_it(shadowed: Shadowed, how: str):
    if not Path(SERVERS[how][0]).exists():
        pytest.skip(f"no {CONSOLE_SCRIPT}: exportlens is not installed for this interpreter")
    editor = await start(shadowed.root, server=SERVERS[how], trusted=False)
    try:
        await editor.logged(f"indexed {shadowed.root.resolve()}")
        editor.open("models/head.py")
        lenses = await editor.client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(editor.uri("models/head.py")))
        )
        assert [lens.command.title for lens in lenses] == ["▶ Export (workspace not trusted)"]
        assert (await editor.status())["trusted"] is False
    finally:
        await stop(editor)
    assert shadowed.imported() == []


@pytest.mark.slow
async def test_a_trusted_server_and_its_worker_import_nothing_from_the_workspace(shadowed: Shadowed):
    editor = await start(shadowed.root, trusted=True)  # python -m, from the workspace
    try:
        editor.open("models/head.py")
        found = await editor.diagnostics("models/head.py", lambda ds: any(d.code == "EL204" for d in ds))
        (d,) = [d for d in found if d.code == "EL204"]
        assert d.range.start.line == editor.line_of("models/head.py", "view(4")
        assert (await editor.status())["worker_pid"] is not None
    finally:
        await stop(editor)
    assert shadowed.imported() == []


@pytest.mark.slow
def test_exportlens_check_run_in_the_project_imports_nothing_from_it(shadowed: Shadowed):
    """The CLI, the warm worker parent it starts (unconfined: only a job's child is) and the jobs."""
    command = [sys.executable, "-m", "exportlens.cli", "check", ".", "--no-cache", "--format", "json"]
    done = subprocess.run(command, cwd=shadowed.root, capture_output=True, text=True, timeout=300)
    assert shadowed.imported() == []
    statuses = {m["target"]: m["status"] for m in json.loads(done.stdout)["modules"]}
    assert statuses == {
        "models/encoder.py:TinyEncoder": "exported",
        **{
            t: "failed"
            for t in (
                "models/fusion.py:GatedFusion",
                "models/head.py:ClassifierHead",
                "models/positional.py:LearnedPositions",
                "models/router.py:TokenRouter",
            )
        },
    }, done.stderr[-2000:]
    assert done.returncode == 1
