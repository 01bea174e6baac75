"""Files changed outside the editor (git pull, a branch switch, another editor): the client
sends workspace/didChangeWatchedFiles, and every open module the change affects is planned
and exported again, as a save would, open file or not."""

from __future__ import annotations

import pytest
from lsprotocol import types

HEAD = "models/head.py"
TARGET = "models/head.py:ClassifierHead"
DYNAMIC = 'inputs = { x = "f32[batch, 16]" }\ndims = { batch = { min = 1, max = 256, example = 4 } }\n'
STATIC = 'inputs = { x = "f32[4, 16]" }\n'  # the batch of 4 the view pins: it exports


def changed_on_disk(editor, *rels: str) -> None:
    changes = [types.FileEvent(editor.uri(rel), types.FileChangeType.Changed) for rel in rels]
    editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes))


async def lens_titles(editor, rel: str) -> list[str]:
    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(rel)))
    )
    return [lens.command.title for lens in lenses]


@pytest.mark.slow
async def test_a_spec_rewritten_on_disk_exports_the_open_module_again(editor):
    editor.open(HEAD)
    await editor.diagnostics(HEAD, lambda ds: [d.code for d in ds] == ["EL204"])
    pyproject = editor.root / "pyproject.toml"
    assert DYNAMIC in pyproject.read_text()
    logged = len(editor.client.log_messages)
    pyproject.write_text(pyproject.read_text().replace(DYNAMIC, STATIC))  # behind the server's back
    changed_on_disk(editor, "pyproject.toml")
    await editor.logged(f"{TARGET}: exported", after=logged)
    assert await editor.diagnostics(HEAD, lambda ds: ds == []) == []
    (title,) = await lens_titles(editor, HEAD)
    assert title.startswith("✓ exported")


async def test_a_model_rewritten_on_disk_while_open_exports_again(editor):
    """The editor reloads the buffer of a file it has not modified (didChange, no save)."""
    editor.open(HEAD)
    await editor.diagnostics(HEAD, lambda ds: [d.code for d in ds] == ["EL204"])
    logged = len(editor.client.log_messages)
    fixed = (editor.root / HEAD).read_text().replace("logits.view(4, self.classes)", "logits.view(-1, self.classes)")
    (editor.root / HEAD).write_text(fixed)
    editor.change(HEAD, fixed)
    changed_on_disk(editor, HEAD)
    await editor.logged(f"{TARGET}: exported", after=logged)
    assert await editor.diagnostics(HEAD, lambda ds: ds == []) == []


async def test_the_editors_own_save_is_exported_once(editor):
    """VS Code reports a file it saved as changed on disk too: that is the save, not another change."""
    uri = editor.open(HEAD)
    await editor.diagnostics(HEAD, lambda ds: [d.code for d in ds] == ["EL204"])
    logged = len(editor.client.log_messages)
    editor.save(HEAD, editor.texts[uri].replace("logits.view(4, self.classes)", "logits.view(-1, self.classes)"))
    changed_on_disk(editor, HEAD)
    await editor.logged(f"{TARGET}: exported", after=logged)
    await editor.status()  # every notification before it was handled
    exports = [m.message for m in editor.client.log_messages[logged:] if "changed on disk" in m.message]
    assert exports == []
