"""Hover and inlay hints show what the export found, in the user's own Dim names."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import capabilities, start, stop

ENCODER = "models/encoder.py"


async def exported(editor) -> None:
    editor.open(ENCODER)
    await editor.logged(f"{ENCODER}:TinyEncoder: exported")


async def hover(editor, line: int, character: int) -> str | None:
    result = await editor.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(editor.uri(ENCODER)), types.Position(line, character))
    )
    return result.contents.value if result else None


async def test_hover_on_the_class_shows_signature_ranges_and_spec(editor):
    await exported(editor)
    line = editor.line_of(ENCODER, "class TinyEncoder")
    text = await hover(editor, line, len("class Tiny"))
    assert "(ids: i64[batch, seq]) -> f32[batch, 32]" in text
    assert "`batch ∈ [1, 64]`" in text and "`seq ∈ [2, 512]`" in text
    assert "Spec: `pyproject.toml:" in text


async def test_hover_on_a_forward_line_shows_its_shape(editor):
    await exported(editor)
    line = editor.line_of(ENCODER, "h = self.embed(ids)")
    text = await hover(editor, line, 10)
    assert "h: f32[batch, seq, 32]" in text
    assert "s77" not in text and "s0" not in text


async def test_inlay_hints_end_each_assignment_in_forward(editor):
    await exported(editor)
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(editor.uri(ENCODER)), types.Range(types.Position(0, 0), types.Position(100, 0))
        )
    )
    by_line = {h.position.line: h.label for h in hints}
    source = editor.texts[editor.uri(ENCODER)].splitlines()
    embed = editor.line_of(ENCODER, "h = self.embed(ids)")
    pooled = editor.line_of(ENCODER, "pooled = h.mean(dim=1)")
    assert by_line[embed] == "f32[batch, seq, 32]"
    assert by_line[pooled] == "f32[batch, 32]"
    hint = next(h for h in hints if h.position.line == embed)
    assert hint.position.character == len(source[embed].rstrip())  # at the end of the line
    # only assignments get hints: `return` lines do not
    assert all("=" in source[line] for line in by_line)


@pytest.mark.slow
async def test_a_value_read_with_item_is_hinted_as_an_int_not_a_tensor(editor):
    """``routed = (...).sum().item()`` is a Python int, used only by the checks after it:
    its hint says ``int`` (the ``i64[]`` before ``.item()`` is an intermediate shape)."""
    router = "models/router.py"
    path = editor.root / router
    checked = "torch._check(routed > 0)\n        if routed > 0:"
    path.write_text(path.read_text().replace("if routed > 0:", checked))
    uri = editor.open(router)
    await editor.logged(f"{router}:TokenRouter: exported")
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(100, 0))
        )
    )
    routed = editor.line_of(router, "routed = (scores > 0.5).sum().item()")
    assert {h.position.line: h.label for h in hints}[routed] == "int"
    text = await editor.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(routed, 10))
    )
    assert text.contents.value.startswith("```python\nrouted: int\n```")


async def test_hints_and_hover_follow_lines_typed_above_them_before_the_next_export(editor):
    """Shapes are positions in the text the export read: after two unsaved lines above,
    each hint is two lines lower, on the same code, and the hover there says the same."""
    await exported(editor)
    uri = editor.uri(ENCODER)
    editor.change(ENCODER, "# one\n# two\n" + editor.texts[uri])
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(100, 0))
        )
    )
    source = editor.texts[uri].splitlines()
    embed = next(i for i, text in enumerate(source) if "h = self.embed(ids)" in text)  # in the edited text
    assert {h.position.line: h.label for h in hints}[embed] == "f32[batch, seq, 32]"
    assert all("=" in source[h.position.line] for h in hints)
    assert "h: f32[batch, seq, 32]" in await hover(editor, embed, 10)


async def test_inlay_hints_follow_the_setting_without_restart(editor):
    await exported(editor)
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"exportlens": {"inlayHints": False}})
    )
    await editor.logged("inlay_hints=False")
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(editor.uri(ENCODER)), types.Range(types.Position(0, 0), types.Position(100, 0))
        )
    )
    assert not hints


def plain_text_only() -> types.ClientCapabilities:
    """What eglot declares without markdown-mode: plain text for hovers and documentation."""
    caps = capabilities()
    caps.text_document.hover = types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])
    caps.text_document.completion.completion_item.documentation_format = [types.MarkupKind.PlainText]
    return caps


@pytest.mark.slow
async def test_a_client_that_takes_plain_text_gets_no_markdown(workspace):
    editor = await start(workspace, caps=plain_text_only(), trusted=False)  # static: no export needed
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        uri = editor.open(ENCODER)
        at = types.Position(editor.line_of(ENCODER, "class TinyEncoder"), len("class Tiny"))
        result = await editor.client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
        assert result.contents.kind == types.MarkupKind.PlainText
        assert result.contents.value.startswith("TinyEncoder — torch.export\n\n")
        assert "Spec: pyproject.toml:" in result.contents.value
        spec = editor.open("pyproject.toml")
        text = editor.texts[spec] + '\n[tool.exportlens.modules."models/'
        editor.change("pyproject.toml", text)
        end = types.Position(text.count("\n"), len(text.splitlines()[-1]))
        items = (
            await editor.client.text_document_completion_async(
                types.CompletionParams(types.TextDocumentIdentifier(spec), end)
            )
        ).items
        docs = [i.documentation for i in items]
        assert docs and {d.kind for d in docs} == {types.MarkupKind.PlainText}
        assert "    def forward(ids" in next(d.value for d, i in zip(docs, items) if i.label.endswith("TinyEncoder"))
        assert not [d.value for d in [result.contents, *docs] if "`" in d.value or "**" in d.value]
    finally:
        await stop(editor)
