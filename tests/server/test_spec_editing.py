"""Writing specs in pyproject.toml: completion of targets, keys, forward's parameters,
dtypes and dim names; hover and go to definition on targets and dims; renaming a dim;
spec errors of the unsaved text, pushed or pulled."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .conftest import apply_text_edits, capabilities, start, stop

PYPROJECT = "pyproject.toml"


def position(text: str, needle: str, back: int = 0) -> types.Position:
    """The position just after the first ``needle`` in ``text`` (``back`` characters before it),
    its column in UTF-16 units, as the servers' clients here negotiate."""
    offset = text.index(needle) + len(needle) - back
    before = text[text.rfind("\n", 0, offset) + 1 : offset]
    return types.Position(text.count("\n", 0, offset), len(before.encode("utf-16-le")) // 2)


def original(editor) -> str:
    return (editor.root / PYPROJECT).read_text()


async def labels(editor, text: str, needle: str, back: int = 0) -> list[str]:
    """Labels of the completion items after ``needle`` in ``text``, typed (not saved) into pyproject.toml."""
    uri = editor.uri(PYPROJECT)
    if uri not in editor.versions:
        editor.open(PYPROJECT)
    editor.change(PYPROJECT, text)
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), position(text, needle, back))
    )
    return [i.label for i in (result.items if isinstance(result, types.CompletionList) else result or [])]


@pytest.mark.slow
async def test_a_module_header_completes_this_projects_targets(editor):
    text = original(editor) + '\n[tool.exportlens.modules."models/'
    found = await labels(editor, text, 'modules."models/')
    assert sorted(found) == [
        "models/encoder.py:TinyEncoder",
        "models/fusion.py:GatedFusion",
        "models/head.py:ClassifierHead",
        "models/positional.py:LearnedPositions",
        "models/router.py:TokenRouter",
    ]


async def picked(editor, text: str, cursor: int, label: str) -> str:
    """``text`` typed into pyproject.toml, the cursor at offset ``cursor``: the text once the
    completion item ``label`` is picked (its edit applied, as VS Code applies it)."""
    uri = editor.uri(PYPROJECT)
    if uri not in editor.versions:
        editor.open(PYPROJECT)
    editor.change(PYPROJECT, text)
    at = position(text[:cursor], text[:cursor])
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), at)
    )
    (item,) = [i for i in result.items if i.label == label]
    return apply_text_edits(text, [item.text_edit])


ENCODER = "models/encoder.py:TinyEncoder"


@pytest.mark.parametrize(
    ("typed", "back"),
    [
        ("[tool.exportlens.modules.", 0),  # nothing after the dot yet (an IndexError once)
        ("[tool.exportlens.modules.]", 1),  # VS Code closed the bracket
        ('[tool.exportlens.modules."]', 1),  # ... then the quote was typed (TOML closes no quote)
        ('[tool.exportlens.modules.""]', 2),  # ... or closed too
        ('[tool.exportlens.modules."]', 2),  # the cursor before the quote
        ('[tool.exportlens.modules."models/enc"]', 2),
        ("[tool.exportlens.modules.'models/']", 2),
    ],
)
@pytest.mark.slow
async def test_a_picked_target_closes_the_header_once(editor, typed, back):
    text = original(editor) + "\n" + typed
    quote = "'" if "'" in typed else '"'
    after = await picked(editor, text, len(text) - back, ENCODER)
    assert after == original(editor) + f"\n[tool.exportlens.modules.{quote}{ENCODER}{quote}]"


async def test_a_module_table_completes_the_keys_it_lacks(editor):
    text = original(editor).replace(
        "dims = { batch = { min = 1, max = 256, example = 4 } }\n",
        "dims = { batch = { min = 1, max = 256, example = 4 } }\nde\n",
    )
    found = await labels(editor, text, "example = 4 } }\nde")
    assert {"device", "strict", "ir", "timeout", "memory_limit", "sandbox"} <= set(found)
    assert not {"init", "inputs", "dims"} & set(found)  # already in the table


async def test_inputs_complete_forwards_parameters(editor):
    text = original(editor).replace('inputs = { text = "f32[batch, text_len, 16]", image', "inputs = { te")
    text = text.replace('"f32[batch, image_len, 16]" }', "")
    assert await labels(editor, text, "inputs = { te") == ["text", "image"]  # forward(self, text, image)


async def test_shape_strings_complete_dtypes_then_dims(editor):
    text = original(editor)
    dtypes = await labels(editor, text, 'inputs = { x = "f32[tokens', back=len("32[tokens"))
    assert {"f32", "i64", "bf16", "bool"} <= set(dtypes)
    typed = text.replace('inputs = { x = "f32[batch, seq, 16]" }', 'inputs = { x = "f32[batch, s" }')
    assert await labels(editor, typed, 'x = "f32[batch, s') == ["batch", "seq"]  # this table's dims only


async def test_a_tensor_fill_completes_the_fills_a_spec_knows(editor):
    typed = original(editor).replace(
        'inputs = { x = "f32[batch, seq, 16]" }', 'inputs = { x = { shape = "f32[batch, seq, 16]", fill = "" } }'
    )
    assert await labels(editor, typed, 'fill = "') == ["randn", "rand", "ones", "zeros", "arange"]


async def test_dims_complete_the_names_the_shapes_use(editor):
    text = original(editor).replace("dims = { text_len = { example = 8 }, image_len", "dims = { te, image_len")
    found = await labels(editor, text, "dims = { te, image_len", back=len(", image_len"))
    assert found == ["batch", "text_len"]  # image_len is declared already


async def hover(editor, needle: str, back: int = 0) -> str:
    uri = editor.uri(PYPROJECT)
    if uri not in editor.versions:
        editor.open(PYPROJECT)
    at = position(editor.texts[uri], needle, back)
    result = await editor.client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    return result.contents.value if result else ""


async def definition(editor, needle: str, back: int = 0) -> list[types.Location]:
    uri = editor.uri(PYPROJECT)
    at = position(editor.texts[uri], needle, back)
    result = await editor.client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), at)
    )
    return list(result or [])


async def test_hover_and_definition_on_a_dim_say_what_the_last_export_found(editor):
    editor.open(PYPROJECT)
    text = await hover(editor, 'x = "f32[batch, se')
    assert "`x` axis 1" in text and "Declared: `seq` ∈ [2, 1024]" in text
    assert "Last export" not in text and await definition(editor, 'x = "f32[batch, se') == []
    editor.open("models/positional.py")
    await editor.logged("models/positional.py:LearnedPositions: failed")
    text = await hover(editor, 'x = "f32[batch, se')
    assert "Last export: ✗ failed" in text and "`seq <= 128`" in text
    (loc,) = await definition(editor, 'x = "f32[batch, se')
    assert loc.uri == editor.uri("models/positional.py")
    assert loc.range.start.line == editor.line_of("models/positional.py", "if seq > self.max_len")


TIED = """
[tool.exportlens.modules."tied.py:Tied"]
inputs = { a = "f32[batch, 4]", b = "f32[?, 4]", c = "f32[b]" }
dims = { batch = { min = 2, max = 64 }, b = { min = 2, max = 32 } }
"""


def last_export(hover_text: str) -> list[str]:
    return [part for part in hover_text.split("\n\n") if part.startswith("Last export")]


async def test_a_dims_hover_lists_the_equalities_that_name_it_and_no_other(editor):
    """An equality names its dims as data: torch tying `b`'s rows to `batch` is of `batch`, not of
    the dim `b`, which only shares the input's name (a search of the text said it was)."""
    (editor.root / "tied.py").write_text(
        "from torch import nn\n\n\nclass Tied(nn.Module):\n"
        "    def forward(self, a, b, c):\n        return a + b, c * 2\n"
    )
    (editor.root / PYPROJECT).write_text(original(editor) + TIED)
    editor.open("tied.py")
    await editor.logged("tied.py:Tied: exported")
    editor.open(PYPROJECT)
    said = last_export(await hover(editor, 'a = "f32[bat'))
    assert said == ["Last export: ✓ `batch ∈ [2, 64]`, `b.shape[0] = batch`"]
    assert last_export(await hover(editor, 'c = "f32[b', back=1)) == ["Last export: ✓ `b ∈ [2, 32]`"]


async def test_a_target_leads_to_its_class(editor):
    editor.open(PYPROJECT)
    (loc,) = await definition(editor, 'modules."models/enc')
    assert loc.uri == editor.uri("models/encoder.py")
    line = editor.line_of("models/encoder.py", "class TinyEncoder")
    assert loc.range.start == types.Position(line, len("class "))
    assert "**TinyEncoder**" in await hover(editor, 'modules."models/enc')


async def test_a_target_leads_to_its_class_in_the_unsaved_text(editor):
    """The class's place is read in the text the editor shows, not the disk's: seven lines
    typed above the class put it where the disk has a blank line."""
    editor.open(PYPROJECT)
    line = editor.line_of("models/encoder.py", "class TinyEncoder")
    editor.open("models/encoder.py")
    editor.change("models/encoder.py", "# a note\n" * 7 + (editor.root / "models/encoder.py").read_text())
    for _ in range(100):  # until the rescan of the unsaved text has landed
        (loc,) = await definition(editor, 'modules."models/enc')
        if loc.range.start.line == line + 7:
            break
        await asyncio.sleep(0.1)
    start = len("class ")
    assert loc.range == types.Range(
        types.Position(line + 7, start), types.Position(line + 7, start + len("TinyEncoder"))
    )


async def rename(editor, needle: str, new_name: str) -> types.WorkspaceEdit:
    uri = editor.uri(PYPROJECT)
    params = types.RenameParams(types.TextDocumentIdentifier(uri), position(editor.texts[uri], needle), new_name)
    return await editor.client.text_document_rename_async(params)


async def test_renaming_a_dim_edits_its_table_and_nothing_else(editor):
    uri = editor.open(PYPROJECT)
    before = editor.texts[uri]
    prepared = await editor.client.text_document_prepare_rename_async(
        types.PrepareRenameParams(types.TextDocumentIdentifier(uri), position(before, 'text = "f32[batch, text'))
    )
    assert prepared.placeholder == "text_len"
    edit = await rename(editor, 'text = "f32[batch, text', "words")
    (change,) = edit.document_changes
    assert change.text_document.version == editor.versions[uri]
    expected = before.replace('"f32[batch, text_len, 16]"', '"f32[batch, words, 16]"').replace(
        "{ text_len = {", "{ words = {"
    )
    assert apply_text_edits(before, change.edits) == expected


@pytest.mark.parametrize(
    ("new_name", "said"),
    [("image_len", "'image_len' is already a dim of models/fusion.py:GatedFusion"), ("2x", "'2x' is not a dim name")],
)
async def test_a_rename_that_would_break_the_spec_is_refused(editor, new_name, said):
    editor.open(PYPROJECT)
    with pytest.raises(Exception, match=said):
        await rename(editor, 'text = "f32[batch, text', new_name)


UNUSED = "dims = { batch = { min = 1, max = 256, example = 4 }, extra = { max = 3 } }"


def with_unused_dim(text: str) -> str:
    return text.replace("dims = { batch = { min = 1, max = 256, example = 4 } }", UNUSED)


async def test_spec_errors_follow_the_unsaved_text(editor):
    uri = editor.open(PYPROJECT)
    editor.change(PYPROJECT, with_unused_dim(editor.texts[uri]))
    found = await editor.diagnostics(PYPROJECT, lambda ds: any("'extra'" in d.message for d in ds))
    (unused,) = [d for d in found if "'extra'" in d.message]
    assert unused.range.start == position(editor.texts[uri], "extra = { max = 3 }", back=len("extra = { max = 3 }"))
    assert "is not used by any input shape" in unused.message


async def test_a_client_that_pulls_diagnostics_gets_them_pulled_not_pushed(workspace):
    caps = capabilities()
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=True)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    editor = await start(workspace, caps=caps, trusted=False)  # untrusted: spec errors, no exports
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        uri = editor.open(PYPROJECT)
        editor.change(PYPROJECT, with_unused_dim(editor.texts[uri]))
        for _ in range(600):  # the server asks for a pull once it has read the change
            if editor.client.pull_requests:
                break
            await asyncio.sleep(0.1)
        report = await editor.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
        )
        assert [d.message for d in report.items if "'extra'" in d.message] == [
            "dim 'extra' is not used by any input shape"
        ]
        again = await editor.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri), previous_result_id=report.result_id)
        )
        assert again.kind == "unchanged"
        assert editor.client.pull_requests  # the server asked for a pull when the text changed
        assert not [p for p in editor.client.published if p[0] == uri]  # and pushed nothing
    finally:
        await stop(editor)


VARIANT = (
    '\n[[tool.exportlens.modules."models/fusion.py:GatedFusion".variants]]\n'
    'name = "long"\ndims = { text_len = { max = 64 } }\n'
)


async def test_a_rename_reaches_the_variants_of_the_class(editor):
    uri = editor.open(PYPROJECT)
    before = editor.texts[uri] + VARIANT
    editor.change(PYPROJECT, before)
    (change,) = (await rename(editor, 'text = "f32[batch, text', "words")).document_changes
    after = apply_text_edits(before, change.edits)
    assert after.count("words") == 3 and "text_len" not in after  # the shape, the class's dims, the variant's dims


async def test_positions_count_in_the_negotiated_encoding(editor):
    """A dim after a character outside the BMP: LSP's UTF-16 counts it twice."""
    uri = editor.open(PYPROJECT)
    text = editor.texts[uri].replace(
        'inputs = { x = "f32[batch, 16]" }', 'inputs = { "é😀" = "f32[batch, 16]", x = "f32[batch, 16]" }'
    )
    editor.change(PYPROJECT, text)
    assert editor.encoding in (None, types.PositionEncodingKind.Utf16)
    line = text.splitlines()[position(text, '"é😀" = "f32[').line]
    (change,) = (await rename(editor, '"é😀" = "f32[batch', "b")).document_changes
    first = min(
        (e.range.start.line, e.range.start.character)
        for e in change.edits
        if e.range.start.line == position(text, "é😀").line
    )
    assert first[1] == len(line[: line.index("batch")].encode("utf-16-le")) // 2
    hovered = await hover(editor, '"é😀" = "f32[bat')
    assert "`é😀` axis 0" in hovered


async def test_a_client_that_pulls_but_cannot_be_asked_again_is_pushed_them_once(workspace):
    caps = capabilities()
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities()  # no workspace.diagnostics.refresh_support
    editor = await start(workspace, caps=caps, trusted=False)
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        uri = editor.open(PYPROJECT)
        editor.change(PYPROJECT, with_unused_dim(editor.texts[uri]))
        await editor.diagnostics(PYPROJECT, lambda ds: any("'extra'" in d.message for d in ds))
        report = await editor.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
        )
        assert not report.items
    finally:
        await stop(editor)
