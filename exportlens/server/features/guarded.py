"""Edits of files that are not open, applied only while the file is as it was when the edit
was offered. An edit of an open document names its version, and the editor refuses it once
the document changed; a file that is not open has no version, so an edit made for it would
land on the wrong lines after the file changed on disk (a pyproject.toml rewritten by git,
by another tool, by hand). Such an action is sent without its edit and with each file's
digest: the client asks for the edit when the user picks the action (``codeAction/resolve``,
or, where a client cannot resolve edits, the ``exportlens.applyFix`` command), and gets it
only if every file still has that digest."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from ..methods import APPLY_FIX_COMMAND
from ..snapshots import WorkspaceSnapshot, path_of

Structure = Callable[[Any, type], Any]
Unstructure = Callable[[Any], Any]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def unversioned(edit: types.WorkspaceEdit | None) -> list[str]:
    """The URIs an edit changes with no version to check: files that were not open."""
    changes = edit.document_changes if edit is not None else None
    return [
        c.text_document.uri
        for c in changes or []
        if isinstance(c, types.TextDocumentEdit) and c.text_document.version is None
    ]


def guard(
    action: types.CodeAction, docs: WorkspaceSnapshot, resolves: bool, unstructure: Unstructure
) -> types.CodeAction:
    """``action`` with its edit of files that are not open deferred: the edit and the digest of
    each such file's text now go in its data (``resolves``: the client asks for the edit by
    ``codeAction/resolve``), else in the arguments of a command that applies it."""
    uris = unversioned(action.edit)
    if not uris:
        return action
    data = {
        "edit": unstructure(action.edit),
        "digests": {uri: digest(docs.get(path).text) for uri in uris if (path := path_of(uri)) is not None},
    }
    action.edit = None
    if resolves:
        action.data = data
    else:
        action.command = types.Command(title=action.title, command=APPLY_FIX_COMMAND, arguments=[data])
    return action


def checked_edit(
    data: Any, docs: WorkspaceSnapshot, structure: Structure
) -> tuple[types.WorkspaceEdit | None, str | None]:
    """The deferred edit in ``data``, or why not: a file changed since it was offered (or
    ``data`` is none of ours). An action that deferred nothing (``data`` None: "Create export
    spec", whose command writes the spec) is resolved with no edit and no complaint."""
    if data is None:
        return types.WorkspaceEdit(document_changes=[]), None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("digests"), dict)
        or not isinstance(data.get("edit"), dict)
    ):
        return None, "this fix carries no edit exportlens made"
    for uri, was in data["digests"].items():
        path = path_of(uri) if isinstance(uri, str) else None
        if path is None or digest(docs.get(path).text) != was:
            name = path.name if path is not None else uri
            return None, f"{name} changed since this fix was offered, so it was not applied: ask for the fix again"
    try:
        return structure(data["edit"], types.WorkspaceEdit), None
    except Exception:
        return None, "this fix carries no edit exportlens made"
