"""Many files opened at once (an editor restoring its session): each file's diagnostics are
published once when it opens and once more only where its verdict changes what it shows,
never again for every other file's verdict."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

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
