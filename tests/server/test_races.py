"""Edits, saves and fixes that cross an export or a proof in flight: the last text's
diagnostics win, and no fix applies to a text it was not made for."""

from __future__ import annotations

import asyncio

import pytest
import tomlkit
from lsprotocol import types

from .conftest import StaleEdit
from .test_external_edits import changed_on_disk
from .test_fixes import quick_fixes

ROUTER = "models/router.py"
BRANCH = """\
        routed = (scores > 0.5).sum().item()
        if routed > 0:
            return x + self.expert(x) * scores.unsqueeze(-1)
        return x
"""
NO_BRANCH = "        return x + self.expert(x) * scores.unsqueeze(-1)\n"
COND = "Run both sides of `if routed > 0:` with torch.cond"


async def preferred_fix(
    editor, rel: str, code: str, version: int | None = None, timeout: float = 60
) -> types.CodeAction:
    """The preferred quick fix of ``code`` in ``rel``, once its proof landed (made for document
    ``version``, where given: until the next export's diagnostics arrive, the client still
    sends the last ones, whose fixes are the last export's)."""

    def made_for(fix: types.CodeAction) -> int | None:
        return fix.edit.document_changes[0].text_document.version

    async def proven() -> types.CodeAction:
        while True:
            found = editor.client.diagnostics.get(editor.uri(rel), [])
            for d in found:
                if d.code == code:
                    fixes = await quick_fixes(editor, rel, d)
                    preferred = [f for f in fixes if f.is_preferred]
                    if preferred and (version is None or made_for(preferred[0]) == version):
                        return preferred[0]
            await asyncio.sleep(0.1)

    try:
        return await asyncio.wait_for(proven(), timeout)
    except asyncio.TimeoutError:
        log = editor.log_tail()
        raise AssertionError(f"no preferred fix for {code} in {rel} within {timeout} s\nserver log:\n{log}") from None


@pytest.mark.slow  # two exports, each with its proofs
async def test_a_proven_fix_picked_after_a_line_was_inserted_above_it_is_refused_then_made_again(editor):
    """The proof lands after the user typed a line above the branch (not saved: no export):
    the fix it proved names the version the export read, and the editor refuses it rather
    than rewriting the line above the branch. After the save, the next export's fix applies."""
    uri = editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    editor.change(ROUTER, "# a line typed above the problem\n" + editor.texts[uri])
    fix = await preferred_fix(editor, ROUTER, "EL101")
    assert fix.title.startswith(COND)
    (change,) = fix.edit.document_changes
    assert change.text_document.version == 1 and editor.versions[uri] == 2
    typed = editor.texts[uri]
    with pytest.raises(StaleEdit):
        editor.apply(fix.edit)
    assert editor.texts[uri] == typed

    editor.save(ROUTER)
    fix = await preferred_fix(editor, ROUTER, "EL101", version=editor.versions[uri])
    assert editor.apply(fix.edit) == [ROUTER]
    text = editor.texts[uri]
    assert text.startswith("# a line typed above the problem\n") and "torch.cond(routed > 0" in text
    await editor.diagnostics(ROUTER, lambda ds: not any(d.code == "EL101" for d in ds))


@pytest.mark.slow  # two exports, and a fix resolved
async def test_a_deferred_spec_fix_for_a_file_changed_on_disk_while_its_export_ran_is_never_misapplied(editor):
    """pyproject.toml (not open) changes on disk while the export that read it runs: the Dim
    fix made for the old text is not offered (its lines moved); once the editor says the file
    changed, the next export's fix is, resolved for the text on disk, and lands in the module's
    table."""
    rel, title = "models/positional.py", "Set `seq` to Dim('seq', max=128)"
    pyproject = editor.root / "pyproject.toml"
    start = len(editor.client.log_messages)
    editor.open(rel)
    await editor.logged("exporting models/positional.py:LearnedPositions", after=start)
    changed = "# a line another tool added above every table\n" + pyproject.read_text()
    pyproject.write_text(changed)
    await editor.logged("models/positional.py:LearnedPositions: failed", after=start)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    offered = [f for f in await quick_fixes(editor, rel, next(d for d in found if d.code == "EL201"))]
    assert not [f for f in offered if f.title.startswith(title)], [f.title for f in offered]

    start = len(editor.client.log_messages)
    changed_on_disk(editor, "pyproject.toml")
    await editor.logged("models/positional.py:LearnedPositions: failed", after=start)
    fix = await preferred_fix(editor, rel, "EL201")
    assert fix.title.startswith(title) and fix.edit is None  # deferred: resolved when picked
    assert editor.apply(await editor.edit_of(fix)) == ["pyproject.toml"]
    text = pyproject.read_text()
    assert text.startswith("# a line another tool added above every table\n")
    table = tomlkit.parse(text)["tool"]["exportlens"]["modules"]["models/positional.py:LearnedPositions"]
    assert table["dims"]["seq"]["max"] == 128
    await editor.diagnostics(rel, lambda ds: not any(d.code == "EL201" for d in ds))


@pytest.mark.slow  # three exports
async def test_two_quick_saves_while_an_export_runs_leave_the_last_texts_diagnostics(editor):
    """Saved fixed, then broken again while the fixed text's export runs: the broken text's
    problem is what the editor shows at the end, at its line, and its fix names its version."""
    uri = editor.open(ROUTER)
    await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
    broken = editor.texts[uri]
    assert BRANCH in broken
    start = len(editor.client.log_messages)
    editor.save(ROUTER, broken.replace(BRANCH, NO_BRANCH))
    await editor.logged(f"exporting {ROUTER}:TokenRouter (save", after=start)
    again = "# saved again\n" + broken
    editor.save(ROUTER, again)
    last = editor.versions[uri]
    line = again.splitlines().index("        if routed > 0:")
    found = await editor.diagnostics(
        ROUTER, lambda ds: any(d.code == "EL101" and d.range.start.line == line for d in ds)
    )
    await asyncio.sleep(3)  # what an older export would still publish, were it not dropped
    while (await editor.status())["running"]:
        await asyncio.sleep(0.2)
    shown = [(v, ds) for u, v, ds in editor.client.published if u == uri]
    first_last = next(i for i, (v, _) in enumerate(shown) if v == last)
    assert all(v == last for v, _ in shown[first_last:]), [v for v, _ in shown]
    assert any(d.code == "EL101" and d.range.start.line == line for d in shown[-1][1]), shown[-1]
    fixes = await quick_fixes(editor, ROUTER, next(d for d in found if d.code == "EL101"))
    for fix in fixes:
        if fix.edit is not None and fix.edit.document_changes:
            assert fix.edit.document_changes[0].text_document.version == last, fix.title
