"""A module a factory table declares (no class of the project behind it) is a module in
the editor too: exported when its file is opened, with a CodeLens on the factory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

BUILD = "models/build.py"

FACTORY = """
[tool.exportlens.modules."models/build.py:tiny_mlp"]
factory = "models/build.py:build_mlp"
init = { width = 8 }
inputs = { input = "f32[batch, 8]" }
dims = { batch = { max = 64 } }
"""


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / BUILD).write_text(
        "from torch import nn\n\n\n"
        "def build_mlp(width):\n    return nn.Sequential(nn.Linear(width, width), nn.ReLU())\n"
    )
    spec = workspace / "pyproject.toml"
    spec.write_text(spec.read_text() + FACTORY)
    return workspace


async def lenses(editor) -> list:
    return await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(BUILD)))
    )


async def test_a_factory_module_exports_when_its_file_opens_and_has_a_lens_on_the_factory(editor):
    editor.open(BUILD)
    await editor.logged(f"{BUILD}:tiny_mlp: exported")
    (lens,) = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(BUILD)))
    )
    assert lens.range.start.line == editor.line_of(BUILD, "def build_mlp")
    assert lens.command.title.startswith("✓ exported")


async def test_a_factory_table_removed_in_the_editor_takes_its_module_with_it(editor):
    editor.open(BUILD)
    await editor.logged(f"{BUILD}:tiny_mlp: exported")
    editor.open("pyproject.toml")
    editor.change("pyproject.toml", (editor.root / "pyproject.toml").read_text().replace(FACTORY, ""))
    for _ in range(600):  # the pyproject.toml is re-read after the typing pause (seconds on a loaded machine)
        if not await lenses(editor):
            break
        await asyncio.sleep(0.1)
    assert not await lenses(editor)


@pytest.mark.slow
async def test_typing_in_the_factory_s_file_reads_the_unsaved_pyproject_toml(editor):
    """The table is gone from the editor's pyproject.toml, not from the disk's: an edit of
    build.py is indexed against the editor's."""
    editor.open(BUILD)
    await editor.logged(f"{BUILD}:tiny_mlp: exported")
    editor.open("pyproject.toml")
    editor.change("pyproject.toml", (editor.root / "pyproject.toml").read_text().replace(FACTORY, ""))
    for _ in range(600):
        if not await lenses(editor):
            break
        await asyncio.sleep(0.1)
    editor.change(BUILD, (editor.root / BUILD).read_text() + "# an edit\n")
    await asyncio.sleep(1.0)  # past the typing pause: build.py is indexed again
    assert not await lenses(editor)
