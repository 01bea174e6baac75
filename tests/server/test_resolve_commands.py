"""Code actions that run a command and defer no edit are resolved quietly: VS Code asks
``codeAction/resolve`` for every action without an edit before it runs its command."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from .test_lenses_actions import UNSPECCED


async def test_resolving_create_export_spec_warns_of_nothing(editor):
    rel = "models/scorer.py"
    (editor.root / rel).write_text(UNSPECCED)
    editor.open(rel)
    line = editor.line_of(rel, "class Scorer")
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(editor.uri(rel)),
        types.Range(types.Position(line, 6), types.Position(line, 6)),
        types.CodeActionContext([]),
    )
    for _ in range(600):  # the file is indexed as it opens (seconds on a loaded machine)
        offered = await editor.client.text_document_code_action_async(params) or []
        if any(a.title == "Create export spec for Scorer" for a in offered):
            break
        await asyncio.sleep(0.1)
    # as VS Code sends it back: the title, the kind and the command, no data (nothing was deferred)
    args = [{"uri": editor.uri(rel), "target": f"{rel}:Scorer"}]
    command = types.Command(title="Create export spec for Scorer", command="exportlens.createSpec", arguments=args)
    action = types.CodeAction(title=command.title, kind=types.CodeActionKind.QuickFix, command=command)
    shown = len(editor.client.messages)
    resolved = await editor.client.code_action_resolve_async(action)
    assert resolved.command is not None and resolved.command.command == "exportlens.createSpec"
    assert not (resolved.edit and resolved.edit.document_changes)  # the command writes the spec
    said = [m.message for m in editor.client.messages[shown:]] + [m.message for m in editor.client.log_messages]
    assert not [m for m in said if "carries no edit" in m], said
