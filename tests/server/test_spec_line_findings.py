"""A finding on a spec line (pyproject.toml) is seen wherever the user looks: in pyproject.toml
whether it is open or not (pushed, or in a pulling client's workspace report), and on the class
it is the spec of, as a hint that links back to the spec line."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .conftest import capabilities, start, stop
from .test_serving import POSITIONS, TABLE

# a text of this file's own: the server, shared by the test files, keeps verdicts by content, and
# test_serving's tests must see their module exported afresh, not this file's verdict of it
OWN = "\n# test_spec_line_findings\n"

REL = "models/positions.py"
pytestmark = pytest.mark.slow  # exports, and a run at the spec's bounds

DIMS = "dims = { batch = { max = 8 }, seq = { min = 2, max = 256 } }"


def _write(editor) -> None:
    """The module and its spec, on disk: pyproject.toml is never opened."""
    (editor.root / REL).write_text(POSITIONS + OWN)
    pyproject = editor.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + TABLE)
    changes = [types.FileEvent(editor.uri(r), types.FileChangeType.Changed) for r in ("pyproject.toml", REL)]
    editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes))


def _line(editor, rel: str, needle: str) -> int:
    return next(i for i, line in enumerate((editor.root / rel).read_text().splitlines()) if needle in line)


def _links(diagnostic: types.Diagnostic) -> list[tuple[str, int]]:
    return [(r.location.uri, r.location.range.start.line) for r in diagnostic.related_information or []]


def _check_both_ways(editor, spec: types.Diagnostic, code: list[types.Diagnostic]) -> None:
    class_line = _line(editor, REL, "class Positions")
    assert spec.range.start.line == _line(editor, "pyproject.toml", DIMS)
    assert (editor.uri(REL), class_line) in _links(spec)  # the spec line names the code it is the spec of
    (mirror,) = [d for d in code if d.code == "EL206"]
    assert mirror.message == spec.message and mirror.severity == types.DiagnosticSeverity.Hint  # not a second problem
    assert mirror.range.start == types.Position(class_line, len("class "))
    assert _links(mirror) == [(editor.uri("pyproject.toml"), spec.range.start.line)]  # and links back


async def test_a_spec_lines_finding_is_pushed_closed_and_mirrored_on_its_class(editor):
    _write(editor)
    editor.open(REL)
    found = await editor.diagnostics("pyproject.toml", lambda ds: any(d.code == "EL206" for d in ds))
    (spec,) = [d for d in found if d.code == "EL206"]
    code = await editor.diagnostics(REL, lambda ds: any(d.code == "EL206" for d in ds))
    _check_both_ways(editor, spec, code)


async def _workspace_items(editor, rel: str) -> list[types.Diagnostic] | None:
    report = await editor.client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    uri = editor.uri(rel)
    return next((list(i.items) for i in report.items if i.uri == uri and i.kind == "full"), None)


async def test_a_pulling_client_gets_a_closed_pyprojects_findings_in_its_workspace_report(workspace):
    """VS Code pulls (vscode-languageclient): a file that is not open is only ever shown from
    the workspace report, which the client asks for again every two seconds."""
    caps = capabilities()
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    editor = await start(workspace, caps=caps, debounce=50)
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        _write(editor)
        editor.open(REL)
        await editor.logged("models/positions.py:Positions: ran the exported program at the spec's bounds")
        for _ in range(300):
            items = await _workspace_items(editor, "pyproject.toml")
            if items and any(d.code == "EL206" for d in items):
                break
            await asyncio.sleep(0.1)
        assert items, "the workspace report never held the closed pyproject.toml's findings"
        (spec,) = [d for d in items if d.code == "EL206"]
        code = await editor.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(editor.uri(REL)))
        )
        _check_both_ways(editor, spec, list(code.items))
        assert not editor.client.published  # pulled, never pushed
    finally:
        await stop(editor)


async def test_a_fix_offered_before_its_proof_says_it_is_being_proven(editor):
    """The quick fix is offered as soon as the verdict lands; until its proof does, its title
    says "proving…", so that nobody takes it for one that was checked."""
    from .test_serving import TWO, TWO_TABLE

    rel = "models/two.py"
    (editor.root / rel).write_text(TWO + OWN)
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", (editor.root / "pyproject.toml").read_text() + TWO_TABLE)
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    first = min((d for d in found if d.code == "EL201"), key=lambda d: d.range.start.line)

    async def titles() -> list[str]:
        now = editor.current(rel, first)
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(editor.uri(rel)),
            now.range,
            types.CodeActionContext([now], only=[types.CodeActionKind.QuickFix]),
        )
        actions = await editor.client.text_document_code_action_async(params) or []
        return [a.title for a in actions if isinstance(a, types.CodeAction) and not a.title.startswith("Ignore")]

    early = await titles()  # the proof of a fix that converges over rounds takes seconds
    assert any(t.endswith("(proving…)") for t in early), early
    for _ in range(200):
        late = await titles()
        if any("serves its ranges" in t for t in late):
            break
        await editor.landed()
    assert not [t for t in late if t.endswith("(proving…)")], late  # proven: it says what it reached
