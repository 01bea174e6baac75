"""Every quick fix, applied as the editor applies it, moves the module past its problem."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from lsprotocol import types

from .conftest import StaleEdit, capabilities, start, stop

PROBLEMS = {
    "models/router.py": ("EL101", "TokenRouter"),
    "models/positional.py": ("EL201", "LearnedPositions"),
    "models/fusion.py": ("EL202", "GatedFusion"),
    "models/head.py": ("EL204", "ClassifierHead"),
}


async def quick_fixes(editor, rel: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    diagnostic = editor.current(rel, diagnostic)  # as the client shows it now: the fixes in its data
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(editor.uri(rel)),
        diagnostic.range,
        types.CodeActionContext([diagnostic], only=[types.CodeActionKind.QuickFix]),
    )
    actions = await editor.client.text_document_code_action_async(params)
    return [a for a in actions or [] if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix]


async def apply_preferred_fix(editor, rel: str, code: str) -> tuple[str, list[str]]:
    """Apply the preferred quick fix of ``code`` in ``rel`` as a user does. A fix made before
    another fix changed pyproject.toml is refused by the editor (or, where the export read
    that file from disk, not offered): then wait for the next export's."""
    seen: list[str] = []

    async def attempt() -> tuple[str, list[str]]:
        while True:
            found = await editor.diagnostics(rel, lambda ds: any(d.code == code for d in ds))
            fixes = await quick_fixes(editor, rel, next(d for d in found if d.code == code))
            preferred = [f for f in fixes if f.is_preferred]
            assert len(preferred) <= 1, [(f.title, f.is_preferred) for f in fixes]
            seen.append(", ".join(f.title for f in fixes) or "no fix")
            if preferred:
                try:
                    return preferred[0].title, editor.apply(await editor.edit_of(preferred[0]))
                except StaleEdit as e:
                    seen.append(str(e))
            await editor.landed()  # an export or a proof landed

    try:
        return await asyncio.wait_for(attempt(), 240)  # a loaded 2-core machine proves slowly
    except asyncio.TimeoutError:
        log = editor.log_tail()
        raise AssertionError(f"no quick fix for {code} in {rel} applied: {seen[-3:]}\nserver log:\n{log}") from None


@pytest.mark.slow  # an export per problem and per fix (9 s); the tests below apply a fix and export again
async def test_preferred_fix_of_each_problem_makes_the_next_export_pass(editor):
    for rel in PROBLEMS:
        editor.open(rel)
    applied = {rel: await apply_preferred_fix(editor, rel, code) for rel, (code, _) in PROBLEMS.items()}
    # each fix lands in the file it names: Dim changes in pyproject.toml, torch.cond in the model
    # the example inputs route no token, but the preferred fix keeps the expert: both sides in torch.cond
    # (its title says what its proof gave: "... (module then exports and serves its ranges)")
    assert applied["models/router.py"][0].startswith(
        "Run both sides of `if routed > 0:` with torch.cond (module then exports"
    )
    assert applied["models/router.py"][1] == ["models/router.py"]
    assert applied["models/positional.py"][0].startswith("Set `seq` to Dim('seq', max=128)")
    assert applied["models/positional.py"][1] == ["pyproject.toml"]
    assert applied["models/fusion.py"][1] == ["pyproject.toml"]
    assert applied["models/head.py"][1] == ["models/head.py"]  # the hard-coded 4 is the bug, not the spec
    assert "torch.cond(routed > 0, true_fn, false_fn, (x, scores))" in (editor.root / "models/router.py").read_text()
    for rel, (code, cls) in PROBLEMS.items():
        await editor.diagnostics(rel, lambda ds, code=code: not any(d.code == code for d in ds))
        try:
            await editor.logged(f"{rel}:{cls}: exported")
        except AssertionError as e:
            shown = {r: editor.client.diagnostics.get(editor.uri(r)) for r in (rel, "pyproject.toml")}
            raise AssertionError(
                f"{e}\ndiagnostics: {shown}\npyproject.toml:\n{(editor.root / 'pyproject.toml').read_text()}"
            ) from None


@pytest.mark.slow
async def test_a_fix_computed_before_an_edit_names_the_older_version(editor):
    """The export saw version 1; after an unsaved edit (version 2, exportOn = save: no new
    export) the quick fix still names version 1, so the editor refuses it rather than
    inserting the check on a line that has moved."""
    router = "models/router.py"
    uri = editor.open(router)
    found = await editor.diagnostics(router, lambda ds: any(d.code == "EL101" for d in ds))
    diagnostic = next(d for d in found if d.code == "EL101")
    edited = "# a line added above the problem\n" + editor.texts[uri]
    editor.change(router, edited)
    fix = next(f for f in await quick_fixes(editor, router, diagnostic) if "torch._check(routed <= 0)" in f.title)
    (change,) = fix.edit.document_changes
    assert change.text_document.uri == uri
    assert change.text_document.version == 1 and editor.versions[uri] == 2
    with pytest.raises(StaleEdit):
        editor.apply(fix.edit)
    assert editor.texts[uri] == edited and "torch._check" not in edited


@pytest.mark.slow
async def test_a_fix_for_a_file_changed_since_the_export_waits_for_the_next_one(editor):
    """The export read pyproject.toml from disk; once the user edits it, the fix that export
    made for it is not offered (its edit would land on the wrong line) until the next
    export, after the save, makes it again for the new text."""
    rel, title = "models/positional.py", "Set `seq` to Dim('seq', max=128)"
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    diagnostic = next(d for d in found if d.code == "EL201")
    offered = lambda fixes: [f.title for f in fixes if f.title.startswith(title)]  # noqa: E731 (proven or not yet)
    assert offered(await quick_fixes(editor, rel, diagnostic))
    uri = editor.open("pyproject.toml")
    edited = "# a line added above every table\n" + editor.texts[uri]
    editor.change("pyproject.toml", edited)
    assert not offered(await quick_fixes(editor, rel, diagnostic))
    editor.save("pyproject.toml")
    applied, files = await apply_preferred_fix(editor, rel, "EL201")
    assert applied.startswith(title) and files == ["pyproject.toml"]
    assert (editor.root / "pyproject.toml").read_text().startswith("# a line added above every table\n")


async def test_the_editor_shows_what_exporting_with_a_fix_gave_once_its_proof_lands(editor):
    """The title says what the proof gave, once it lands (or at once, where the server
    remembers this module's verdict from an earlier export of the same text)."""
    rel, proven = (
        "models/positional.py",
        ("Set `seq` to Dim('seq', max=128) (module then exports and serves its ranges)", True),
    )
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    diagnostic = next(d for d in found if d.code == "EL201")
    titles: list[tuple[str, bool]] = []

    async def proof_landed() -> None:
        while proven not in titles:
            titles[:] = [(a.title, bool(a.is_preferred)) for a in await quick_fixes(editor, rel, diagnostic)]
            await asyncio.sleep(0.2)

    try:
        await asyncio.wait_for(proof_landed(), 60)
    except asyncio.TimeoutError:
        raise AssertionError(f"the proof never reached the quick fix: {titles}") from None
    assert all(title.count("(module then") <= 1 for title, _ in titles), titles  # said once, not once per proof


async def test_no_fix_is_shown_preferred_before_its_proof_and_probes_say_so(editor):
    """The router's job names the fix to try first; the editor marks one preferred only once
    the owner's proof exported it and its program agreed with eager on every probe: the
    torch.cond, not the check the example inputs happen to satisfy."""
    rel = "models/router.py"
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL101" for d in ds))
    diagnostic = next(d for d in found if d.code == "EL101")
    seen: list[list[tuple[str, bool]]] = []

    async def proof_landed() -> None:
        while not any(preferred for _, preferred in (seen[-1] if seen else [])):
            seen.append([(a.title, bool(a.is_preferred)) for a in await quick_fixes(editor, rel, diagnostic)])
            await asyncio.sleep(0.1)

    try:
        await asyncio.wait_for(proof_landed(), 60)
    except asyncio.TimeoutError:
        raise AssertionError(f"no fix became preferred: {seen}") from None
    shown_preferred = {title for titles in seen for title, preferred in titles if preferred}
    assert shown_preferred == {
        "Run both sides of `if routed > 0:` with torch.cond (module then exports and serves its ranges)"
    }, seen


async def test_a_fix_for_a_closed_file_that_changed_on_disk_since_it_was_offered_is_refused(editor):
    """pyproject.toml is not open, so the fix's edit can name no version for the editor to
    check: the action comes without its edit, which the editor asks for when the user picks
    it. Once the file changed on disk meanwhile, the edit is refused (empty, and the user
    is told why) rather than written over the wrong lines."""
    rel, title = "models/positional.py", "Set `seq` to Dim('seq', max=128)"
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    diagnostic = next(d for d in found if d.code == "EL201")
    (fix,) = [f for f in await quick_fixes(editor, rel, diagnostic) if f.title.startswith(title)]
    pyproject = editor.root / "pyproject.toml"
    changed = "# a line another tool added above every table\n" + pyproject.read_text()
    pyproject.write_text(changed)
    assert editor.apply(await editor.edit_of(fix)) == []
    assert pyproject.read_text() == changed
    assert any("pyproject.toml changed since this fix was offered" in m.message for m in editor.client.messages)


@pytest.mark.slow
async def test_a_client_that_cannot_resolve_edits_gets_the_fix_by_command_while_the_file_is_unchanged(workspace):
    """Without codeAction/resolve for edits, the action carries the command
    exportlens.applyFix: run while pyproject.toml is as it was, the server sends the edit
    (workspace/applyEdit); run after it changed on disk, it sends nothing."""
    caps = capabilities()
    caps.text_document.code_action.resolve_support = None
    editor = await start(workspace, caps=caps)
    _tell_code_actions_from_commands(editor.client.protocol._converter)
    sent: list[types.WorkspaceEdit] = []

    @editor.client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        sent.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    try:
        rel, title = "models/positional.py", "Set `seq` to Dim('seq', max=128)"
        editor.open(rel)
        found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
        diagnostic = next(d for d in found if d.code == "EL201")
        (fix,) = [f for f in await quick_fixes(editor, rel, diagnostic) if f.title.startswith(title)]
        assert fix.edit is None and fix.command.command == "exportlens.applyFix"
        run = types.ExecuteCommandParams(command=fix.command.command, arguments=fix.command.arguments)

        pyproject = editor.root / "pyproject.toml"
        before = pyproject.read_text()
        pyproject.write_text("# a line another tool added above every table\n" + before)
        assert await editor.client.workspace_execute_command_async(run) is False
        assert sent == []

        pyproject.write_text(before)
        assert await editor.client.workspace_execute_command_async(run) is True
        (edit,) = sent
        assert editor.apply(edit) == ["pyproject.toml"]
        assert "seq = { min = 2, max = 128 }" in pyproject.read_text()
    finally:
        await stop(editor)


def _tell_code_actions_from_commands(converter) -> None:
    """As VS Code does: an item of a codeAction answer is a Command where its ``command`` is a
    string, else a CodeAction (lsprotocol 2025's own hook takes any item with a ``command`` for
    a Command, a CodeAction carrying one included)."""

    def structure(obj: Any, _: Any) -> types.Command | types.CodeAction:
        return converter.structure(obj, types.Command if isinstance(obj.get("command"), str) else types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)


async def _asked(editor, rel: str, diagnostic: types.Diagnostic) -> list[tuple[str, bool, Any]]:
    """The quick fixes offered for ``diagnostic`` as the client sends it: title, preferred, edit."""
    context = types.CodeActionContext([diagnostic], only=[types.CodeActionKind.QuickFix])
    params = types.CodeActionParams(types.TextDocumentIdentifier(editor.uri(rel)), diagnostic.range, context)
    actions = await editor.client.text_document_code_action_async(params)
    return [(a.title, bool(a.is_preferred), a.edit) for a in actions or [] if isinstance(a, types.CodeAction)]


async def _proven(editor, rel: str, code: str) -> types.Diagnostic:
    """``code``'s diagnostic in ``rel`` once a fix of it is proven (offered preferred)."""
    while True:
        found = await editor.diagnostics(rel, lambda ds: any(d.code == code for d in ds))
        diagnostic = next(d for d in found if d.code == code)
        if any(preferred for _, preferred, _ in await _asked(editor, rel, diagnostic)):
            return diagnostic
        await editor.landed()


async def test_a_client_that_sends_no_data_back_is_offered_the_same_fixes(editor):
    """The fixes ride in each diagnostic's data; a client that strips it from the code action
    request (some do) is offered the same quick fixes, found again from the diagnostic."""
    rel = "models/positional.py"
    editor.open(rel)
    diagnostic = await asyncio.wait_for(_proven(editor, rel, "EL201"), 90)
    assert [f["$type"] for f in diagnostic.data["fixes"]] == ["Fix"]  # plain JSON, read back by the server
    with_data = await _asked(editor, rel, diagnostic)
    stripped = types.Diagnostic(diagnostic.range, diagnostic.message, diagnostic.severity, diagnostic.code)
    stripped.source = diagnostic.source
    assert await _asked(editor, rel, stripped) == with_data
    assert with_data[0][:2] == ("Set `seq` to Dim('seq', max=128) (module then exports and serves its ranges)", True)


async def test_a_diagnostic_whose_data_keeps_only_its_id_is_offered_its_fixes_whatever_its_message_says(editor):
    """A client may rewrap the message it shows and send back only part of the data: the
    diagnostic names its finding by the id alone, never by its words."""
    rel = "models/positional.py"
    path = editor.root / rel
    path.write_text(path.read_text() + "\n# this test's own text: no other test's verdict\n")
    editor.open(rel)
    diagnostic = await asyncio.wait_for(_proven(editor, rel, "EL201"), 90)
    assert re.fullmatch("[0-9a-f]{16}", diagnostic.data["id"]) and "message" not in diagnostic.data
    with_data = await _asked(editor, rel, diagnostic)
    rewrapped = diagnostic.message.replace(", but ", ",\nbut ")
    assert rewrapped != diagnostic.message
    sent = types.Diagnostic(diagnostic.range, rewrapped, diagnostic.severity, diagnostic.code, source=diagnostic.source)
    sent.data = {"id": diagnostic.data["id"]}
    assert await _asked(editor, rel, sent) == with_data
    assert with_data[0][:2] == ("Set `seq` to Dim('seq', max=128) (module then exports and serves its ranges)", True)
    sent.data = {"id": "0" * 16}  # a finding no longer there (or never): no fix, only its line's ignore
    assert [title for title, _, _ in await _asked(editor, rel, sent)] == ["Ignore EL201 on this line"]
