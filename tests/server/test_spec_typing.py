"""pyproject.toml as it is while it is typed: one real server is sent hundreds of texts (the
examples' spec cut at every character, and broken on purpose: keys and tables written twice,
values of the wrong type, strings left open, lone surrogates, which JSON can carry and UTF-8
cannot), and after each, every request it serves for the file. None may fail: each answers,
maybe with nothing. A rename refused with a sentence is an answer; an internal error is not.
Once the text is whole again, its diagnostics are what they were, none stale."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from spec_texts import BROKEN, texts

from .conftest import capabilities, start, stop

PYPROJECT = "pyproject.toml"
REFUSED = types.LSPErrorCodes.RequestFailed  # a rename refused, in a sentence the editor shows


def positions(text: str, middle: bool) -> list[types.Position]:
    """Where the user types (the end), and the middle of the text, in UTF-16 units."""
    out = []
    for offset in (len(text), len(text) // 2)[: 2 if middle else 1]:
        before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
        line = before[before.rfind("\n") + 1 :]
        out.append(types.Position(before.count("\n"), len(line.encode("utf-16-le", "surrogatepass")) // 2))
    return out


async def answered(request, *, refusable: bool = False):
    """The request's answer; a refusal (RequestFailed, said in a sentence) where ``refusable``."""
    try:
        return await asyncio.wait_for(request, 30)
    except JsonRpcException as e:
        if refusable and e.code == REFUSED and "Traceback" not in str(e):
            return None
        raise


async def every_request(client, uri: str, text: str, middle: bool = True) -> list[types.Diagnostic]:
    """Every request the server serves for a pyproject.toml, at each position; the pulled diagnostics."""
    doc = types.TextDocumentIdentifier(uri)
    report = await answered(client.text_document_diagnostic_async(types.DocumentDiagnosticParams(doc)))
    found = report.items
    await answered(client.text_document_code_lens_async(types.CodeLensParams(doc)))
    for at in positions(text, middle):
        span = types.Range(at, at)
        await asyncio.gather(
            answered(client.text_document_completion_async(types.CompletionParams(doc, at))),
            answered(client.text_document_hover_async(types.HoverParams(doc, at))),
            answered(client.text_document_definition_async(types.DefinitionParams(doc, at))),
            answered(client.text_document_prepare_rename_async(types.PrepareRenameParams(doc, at)), refusable=True),
            answered(client.text_document_rename_async(types.RenameParams(doc, at, "renamed")), refusable=True),
            answered(
                client.text_document_code_action_async(
                    types.CodeActionParams(doc, span, types.CodeActionContext(found))
                )
            ),
            answered(
                client.text_document_inlay_hint_async(types.InlayHintParams(doc, types.Range(types.Position(0, 0), at)))
            ),
        )
    return found


def shown(found: list[types.Diagnostic]) -> list[tuple]:
    return sorted((d.code, d.message, d.range.start.line, d.range.start.character) for d in found)


@pytest.mark.slow  # 500+ texts, every request each (38 s); the tests below type a broken spec quickly
async def test_every_request_answers_while_the_spec_is_typed(workspace):
    caps = capabilities()
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=True)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    editor = await start(workspace, caps=caps, trusted=False)  # static features only: no torch
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        uri = editor.open(PYPROJECT)
        spec = editor.texts[uri]
        before = shown(await every_request(editor.client, uri, spec))
        generated = texts(spec)
        assert len(generated) > 500
        for text, middle in generated:
            editor.change(PYPROJECT, text)
            try:
                await every_request(editor.client, uri, text, middle)
            except Exception as e:
                raise AssertionError(f"{e!r} for the text:\n{text!r}") from e
        editor.change(PYPROJECT, spec)
        assert shown(await every_request(editor.client, uri, spec)) == before
        errors = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
        assert errors == []  # no notification (didChange) failed either
    finally:
        await stop(editor)


NOT_TOML = ("EL006", "EL401")  # does not parse; is not UTF-8


@pytest.mark.parametrize(
    "broken",
    ["a key twice", "a table twice", "a string left open", "a lone surrogate in a shape", "a header left open"],
)
@pytest.mark.parametrize("how", ["typed", "saved"])
@pytest.mark.slow
async def test_a_spec_that_does_not_parse_is_said_once_and_cleared_once_fixed(editor, broken, how):
    uri = editor.open(PYPROJECT)
    spec = editor.texts[uri]

    def write(rel: str, text: str) -> None:
        editor.change(rel, text)
        if how == "saved":  # a lone surrogate as the bytes it stands for (no UTF-8 file can hold it)
            (editor.root / rel).write_bytes(text.encode("utf-8", "surrogatepass"))
            editor.client.text_document_did_save(
                types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(editor.uri(rel)))
            )

    before = shown(await editor.diagnostics(PYPROJECT, lambda ds: True))
    old, new = BROKEN[broken]
    write(PYPROJECT, spec.replace(old, new, 1))
    (said,) = await editor.diagnostics(PYPROJECT, lambda ds: any(d.code in NOT_TOML for d in ds))
    assert said.code in NOT_TOML
    write(PYPROJECT, spec)
    after = await editor.diagnostics(PYPROJECT, lambda ds: not any(d.code in NOT_TOML for d in ds))
    assert shown(after) == before


async def test_closing_a_broken_spec_unsaved_shows_the_problems_of_the_file_on_disk(editor):
    uri = editor.open(PYPROJECT)
    before = shown(await editor.diagnostics(PYPROJECT, lambda ds: True))
    editor.change(PYPROJECT, editor.texts[uri] + "\n[tool.exportlens.modules.")
    await editor.diagnostics(PYPROJECT, lambda ds: any(d.code == "EL006" for d in ds))
    await asyncio.sleep(1)  # nothing of the change is left to publish
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    del editor.versions[uri]  # not closed again when the test ends
    after = await editor.diagnostics(PYPROJECT, lambda ds: not any(d.code == "EL006" for d in ds))
    assert shown(after) == before
