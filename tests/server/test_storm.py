"""Many files opened at once (an editor restoring its session): each file's diagnostics are
published once when it opens and once more only where its verdict changes what it shows,
never again for every other file's verdict."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from lsprotocol import types

from exportlens.server.lifecycle import RUNNING_NAMED

from .conftest import start, stop

FILES = 12

MODULE = """\
import torch
from torch import nn


class M{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {body}
"""


@pytest.fixture
def storm(tmp_path: Path) -> Path:
    """FILES small modules with a table each; every third hard-codes its batch (EL204)."""
    root = tmp_path / "storm"
    (root / "mods").mkdir(parents=True)
    spec = '[tool.exportlens]\ndevice = "cpu"\n'
    for i in range(FILES):
        body = "self.fc(x).view(4, -1)" if i % 3 == 2 else "torch.relu(self.fc(x))"
        (root / "mods" / f"m{i}.py").write_text(MODULE.format(i=i, body=body))
        spec += f'\n[tool.exportlens.modules."mods/m{i}.py:M{i}"]\ninputs = {{ x = "f32[batch, 8]" }}\n'
        spec += "dims = { batch = { min = 2, max = 64, example = 4 } }\n"
    (root / "pyproject.toml").write_text(spec)
    return root


@pytest.mark.slow
async def test_files_opened_at_once_are_each_published_at_most_twice(storm):
    editor = await start(storm)
    try:
        await editor.logged(f"indexed {storm.resolve()}")
        for i in range(FILES):
            editor.open(f"mods/m{i}.py")
        counted = await running_while_exporting(editor)
        assert max(counted) == FILES  # every export of the storm counted while under way
        for i in range(FILES):
            await editor.logged(f"mods/m{i}.py:M{i}: {'failed' if i % 3 == 2 else 'exported'} in")
        for i in range(FILES):  # every verdict shown: EL204 where the batch is hard-coded
            await editor.diagnostics(
                f"mods/m{i}.py", lambda ds, i=i: any(d.code == "EL204" for d in ds) == (i % 3 == 2)
            )
        await editor.status()  # whatever was still to be published went out before this answer
        pushes = Counter(uri for uri, _, _ in editor.client.published)
        per_file = {f"m{i}.py": pushes[editor.uri(f"mods/m{i}.py")] for i in range(FILES)}
        assert max(per_file.values()) <= 2, per_file  # once opened, once its verdict changed what it shows
    finally:
        await stop(editor)


async def running_while_exporting(editor) -> list[int]:
    """``exportlens/status`` asked back to back until the first verdict lands: how many exports
    each answer counted. Each names the first RUNNING_NAMED of them (a storm's every name made
    its answers most of what the server wrote), and no module that is not in the storm."""
    targets, counted = {f"mods/m{i}.py:M{i}" for i in range(FILES)}, []
    while not any(": exported in" in m.message or ": failed in" in m.message for m in editor.client.log_messages):
        status = await editor.status()
        assert len(status["running"]) == min(status["running_count"], RUNNING_NAMED), status
        assert set(status["running"]) <= targets, status["running"]
        counted.append(status["running_count"])
    return counted


@pytest.mark.slow
async def test_a_save_starts_its_export_without_a_fixed_wait(storm):
    """Issue 40: a batch is whole once nothing more is pending, so a lone save's export starts
    at once; it waited a fixed 20 ms before. The fastest of five saves, as the editor sees it."""
    editor = await start(storm, debounce=0)
    try:
        await editor.logged(f"indexed {storm.resolve()}")
        editor.open("mods/m0.py")
        await editor.logged("mods/m0.py:M0: exported in")
        loop, waits = asyncio.get_running_loop(), []
        for n in range(5):
            seen = len(editor.client.log_messages)
            began = loop.time()
            editor.save("mods/m0.py", editor.texts[editor.uri("mods/m0.py")] + f"# edit {n}\n")
            await editor.logged("exporting mods/m0.py:M0 (save", after=seen)
            waits.append(loop.time() - began)
            await editor.logged("mods/m0.py:M0: exported in", after=seen)
        assert min(waits) < 0.02, waits
    finally:
        await stop(editor)


@pytest.mark.slow
async def test_a_failing_file_is_pushed_twice_from_open_to_its_proven_fixes(tmp_path: Path):
    """Issue 40: once when opened, once when its verdict shows its problem. The proof of its
    fixes that lands after changes only the fixes its diagnostic carries: it was pushed a
    third time for that alone. The quick fix the editor is offered for the diagnostic it was
    sent before the proof still says what the proof gave."""
    root = tmp_path / "pushed"
    (root / "mods").mkdir(parents=True)
    (root / "mods" / "pushed.py").write_text(
        MODULE.format(i=0, body="self.fc(x).view(4, -1) * 3").replace("class M0", "class PushedTwice")
    )
    (root / "pyproject.toml").write_text(
        '[tool.exportlens]\ndevice = "cpu"\n\n[tool.exportlens.modules."mods/pushed.py:PushedTwice"]\n'
        'inputs = { x = "f32[batch, 8]" }\ndims = { batch = { min = 2, max = 64, example = 4 } }\n'
    )
    editor = await start(root)
    try:
        await editor.logged(f"indexed {root.resolve()}")
        uri = editor.open("mods/pushed.py")
        await editor.logged("mods/pushed.py:PushedTwice: failed in")
        await editor.logged("mods/pushed.py:PushedTwice: proved")
        await editor.status()  # whatever was still to be published went out before this answer
        pushed = [[d.code for d in ds] for u, _, ds in editor.client.published if u == uri]
        assert pushed == [[], ["EL204"]], pushed
        diagnostic = editor.client.diagnostics[uri][0]  # as sent before the proof landed
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri),
            diagnostic.range,
            types.CodeActionContext([diagnostic], only=[types.CodeActionKind.QuickFix]),
        )
        actions = await editor.client.text_document_code_action_async(params) or []
        titles = [a.title for a in actions if isinstance(a, types.CodeAction)]
        assert any(t.endswith("(module then exports and serves its ranges)") for t in titles), titles
    finally:
        await stop(editor)
