"""A class with variants in pyproject.toml: each variant is exported on its own, and the
editor says which one a problem is about (diagnostic, hover, CodeLens)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

POSITIONAL = "models/positional.py"

VARIANTS = """
[[tool.exportlens.modules."models/positional.py:LearnedPositions".variants]]
name = "short"
dims = { seq = { min = 2, max = 64 } }

[[tool.exportlens.modules."models/positional.py:LearnedPositions".variants]]
name = "long"
dims = { seq = { min = 2, max = 1024 } }
"""


@pytest.fixture
def workspace(workspace: Path) -> Path:
    """The examples, with LearnedPositions (max_len 128) checked at two sequence ranges."""
    spec = workspace / "pyproject.toml"
    spec.write_text(spec.read_text() + VARIANTS)
    return workspace


async def test_a_variants_diagnostic_hover_and_lens_name_the_variant(editor):
    editor.open(POSITIONAL)
    await editor.logged(f"{POSITIONAL}:LearnedPositions[short]: exported")
    found = await editor.diagnostics(POSITIONAL, lambda ds: any(d.code == "EL201" for d in ds))
    (d,) = [d for d in found if d.code == "EL201"]
    assert d.message.startswith(
        "LearnedPositions[long]: `seq` is declared as [2, 1024], but this line requires `seq <= 128`"
    )
    assert d.range.start.line == editor.line_of(POSITIONAL, "if seq > self.max_len")

    line = editor.line_of(POSITIONAL, "class LearnedPositions")
    hover = await editor.client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(editor.uri(POSITIONAL)), types.Position(line, len("class Learned"))
        )
    )
    text = hover.contents.value
    assert "**LearnedPositions[short]**" in text and "✓ exported" in text
    assert "**LearnedPositions[long]**" in text and "✗ failed: EL201" in text

    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(POSITIONAL)))
    )
    titles = sorted(lens.command.title for lens in lenses)
    assert titles[0] == "[long] ✗ 1 problem" and titles[1].startswith("[short] ✓ exported")
