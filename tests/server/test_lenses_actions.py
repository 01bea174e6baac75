"""CodeLens states, "Export this module" (a .pt2 on disk), and "Create export spec"."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import capabilities, start, stop

ENCODER = "models/encoder.py"


async def lens_titles(editor, rel: str) -> list[str]:
    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(rel)))
    )
    return [lens.command.title for lens in lenses]


@pytest.mark.slow
async def test_lens_follows_the_export(editor):
    editor.open(ENCODER)
    await editor.logged(f"{ENCODER}:TinyEncoder: exported")
    (title,) = await lens_titles(editor, ENCODER)
    assert title.startswith("✓ exported ") and title.endswith(" s")
    editor.open("models/router.py")
    await editor.logged("models/router.py:TokenRouter: failed")
    assert await lens_titles(editor, "models/router.py") == ["✗ 1 problem"]


@pytest.mark.slow
async def test_export_this_module_writes_a_pt2_and_says_where(editor):
    editor.open(ENCODER)
    line = editor.line_of(ENCODER, "class TinyEncoder")
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(editor.uri(ENCODER)),
        types.Range(types.Position(line, 6), types.Position(line, 6)),
        types.CodeActionContext([]),
    )
    actions = await editor.client.text_document_code_action_async(params)
    assert "Export TinyEncoder to .pt2" in [a.title for a in actions]
    # lsprotocol's client side reads any code action carrying a command as a bare Command
    # (and loses its arguments), so run what the action runs, as VS Code would
    args = [{"uri": editor.uri(ENCODER), "target": "models/encoder.py:TinyEncoder", "save": True}]
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams("exportlens.exportModule", args)
    )
    artifact = Path(result["artifact"])
    assert artifact == editor.root.resolve() / ".exportlens/artifacts/TinyEncoder.pt2"
    assert artifact.stat().st_size > 0
    assert any(str(artifact) in m.message for m in editor.client.messages)


UNSPECCED = """\
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self, hidden: int = 24, classes: int = 3):
        super().__init__()
        self.proj = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).softmax(-1)
"""


@pytest.mark.slow
async def test_create_spec_exports_its_guess_writes_it_and_selects_it(workspace):
    """The quick fix runs the command: the guess is exported before it is written, the
    table says what was guessed and what the check gave, and the editor is asked to
    show pyproject.toml with the new table selected."""
    (workspace / "models/scorer.py").write_text(UNSPECCED)
    caps = capabilities()
    caps.window.show_document = types.ShowDocumentClientCapabilities(support=True)
    editor = await start(workspace, caps=caps)
    sent = []

    @editor.client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        sent.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    try:
        editor.open("models/scorer.py")
        await editor.logged("indexed")
        assert await lens_titles(editor, "models/scorer.py") == ["needs example inputs"]
        line = editor.line_of("models/scorer.py", "class Scorer")
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(editor.uri("models/scorer.py")),
            types.Range(types.Position(line, 6), types.Position(line, 6)),
            types.CodeActionContext([]),
        )
        actions = await editor.client.text_document_code_action_async(params)
        create = next(a for a in actions if a.title == "Create export spec for Scorer")
        # lsprotocol's client side reads a code action carrying a command as a bare Command
        # (and loses its arguments), so run what the action runs, as VS Code would
        assert "exportlens.createSpec" in str(create.command)
        args = [{"uri": editor.uri("models/scorer.py"), "target": "models/scorer.py:Scorer"}]
        run = types.ExecuteCommandParams("exportlens.createSpec", args)
        assert await editor.client.workspace_execute_command_async(run) is True
        (edit,) = sent
        assert editor.apply(edit) == ["pyproject.toml"]
        pyproject = (editor.root / "pyproject.toml").read_text()
        # the first layer tells the input size; constructor defaults become init; the rest is kept as it was
        table = (
            '[tool.exportlens.modules."models/scorer.py:Scorer"]\n'
            "# Guessed by exportlens from the code; checked: exports.\n"
        )
        assert table in pyproject
        assert "#   x: last size 24: the input of `self.proj = nn.Linear(hidden, classes)`" in pyproject
        assert 'init = {hidden = 24, classes = 3}\ninputs = {x = "f32[batch, 24]"}' in pyproject
        assert pyproject.startswith("# Example models for exportlens.")
        (show,) = editor.client.shown_documents
        header = pyproject.splitlines().index(table.splitlines()[0])
        assert show.uri == editor.uri("pyproject.toml") and show.take_focus
        assert show.selection.start == types.Position(header, 0) and show.selection.end.line == header + 5
    finally:
        await stop(editor)
