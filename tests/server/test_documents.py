"""Document lifecycle: debounced exports, stale results, closing and deleting files."""

from __future__ import annotations

import pytest
from lsprotocol import types

ROUTER = "models/router.py"


@pytest.mark.parametrize(
    "export_on", [pytest.param("save", marks=pytest.mark.slow), "change"]
)  # (one is enough for the quick loop)
async def test_fifty_rapid_edits_export_the_final_text_once(editor, export_on):
    """Saves (exportOn = save) or unsaved edits (exportOn = change): one export, of the last text."""
    await editor.configure(exportOn=export_on, debounce=400)
    editor.open(ROUTER)
    await editor.logged(f"{ROUTER}:TokenRouter: failed")
    before = (await editor.status())["exports_started"]
    original = editor.texts[editor.uri(ROUTER)]
    fixed = original.replace("        if routed > 0:", "        torch._check(routed <= 0)\n        if routed > 0:")
    assert fixed != original
    edit = editor.save if export_on == "save" else editor.change
    for i in range(49):
        edit(ROUTER, original + f"# edit {i}\n")
    edit(ROUTER, fixed)
    await editor.logged(f"{ROUTER}:TokenRouter: exported")
    await editor.diagnostics(ROUTER, lambda ds: not ds)
    assert (await editor.status())["exports_started"] == before + 1
    if export_on == "change":  # the export saw the editor's text; the file on disk still fails
        assert (editor.root / ROUTER).read_text() == original


async def test_closing_a_file_clears_its_diagnostics(editor):
    editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    editor.client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(editor.uri(ROUTER)))
    )
    await editor.diagnostics(ROUTER, lambda ds: not ds)


async def test_deleting_a_file_clears_its_diagnostics_and_lenses(editor):
    editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    (editor.root / ROUTER).unlink()
    editor.client.workspace_did_delete_files(types.DeleteFilesParams([types.FileDelete(editor.uri(ROUTER))]))
    await editor.diagnostics(ROUTER, lambda ds: not ds)
    status = await editor.status()
    assert status["modules_indexed"] == 4


async def test_a_syntax_error_is_a_diagnostic_and_nothing_breaks(editor):
    editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    broken = editor.texts[editor.uri(ROUTER)].replace("def forward(self, x", "def forward(self x")
    editor.save(ROUTER, broken)
    found = await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL401" for d in ds))
    d = next(d for d in found if d.code == "EL401")
    assert d.range.start.line == editor.line_of(ROUTER, "def forward(self x")
    # the server still answers
    hover = await editor.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(editor.uri(ROUTER)), types.Position(0, 0))
    )
    assert hover is None


async def test_a_save_that_inserts_a_line_never_shows_the_problem_on_the_old_line(editor):
    """Between the save and the export of the new text, the last export's problem is
    published over the new text: at its line there, never at the line it had before."""
    uri = editor.open(ROUTER)
    found = await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    before = next(d for d in found if d.code == "EL101").range.start.line
    seen, logged = len(editor.client.published), len(editor.client.log_messages)
    editor.save(ROUTER, "# a line added above the problem\n" + editor.texts[uri])
    await editor.logged(f"{ROUTER}:TokenRouter: failed", after=logged)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    after = [
        (version, [d.range.start.line for d in ds if d.code == "EL101"])
        for u, version, ds in editor.client.published[seen:]
        if u == uri
    ]
    assert after and all(lines == [before + 1] for version, lines in after if version == 2), after
