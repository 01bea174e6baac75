"""Completion, definition and rename in pyproject.toml's module tables: answered from
the text and the index, never by exporting."""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .features import markup, spec_complete, spec_nav, spec_rename
from .server import ExportLensServer


def completion(ls: ExportLensServer, params: types.CompletionParams) -> types.CompletionList:
    found = ls.document(params.text_document.uri)
    items = spec_complete.completions(ls.session, found[0], params.position) if found else []
    formats = markup.documentation_formats(ls.client_capabilities)
    for item in items:
        if isinstance(item.documentation, types.MarkupContent):
            item.documentation = markup.content(item.documentation.value, formats)
    return types.CompletionList(is_incomplete=False, items=items)


def definition(ls: ExportLensServer, params: types.DefinitionParams) -> list[types.Location]:
    found = ls.document(params.text_document.uri)
    if found is None:
        return []
    doc, docs = found
    return spec_nav.definition(ls.session, doc, docs, params.position)


def _refused(e: spec_rename.RenameRefused) -> JsonRpcException:
    return JsonRpcException(str(e), code=types.LSPErrorCodes.RequestFailed)


def prepare_rename(ls: ExportLensServer, params: types.PrepareRenameParams) -> types.PrepareRenamePlaceholder | None:
    found = ls.document(params.text_document.uri)
    if found is None:
        return None
    try:
        return spec_rename.prepare(found[0], params.position)
    except spec_rename.RenameRefused as e:
        raise _refused(e) from None


def rename(ls: ExportLensServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    found = ls.document(params.text_document.uri)
    if found is None:
        return None
    try:
        return spec_rename.rename(found[0], params.position, params.new_name)
    except spec_rename.RenameRefused as e:
        raise _refused(e) from None


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=spec_complete.TRIGGERS))(
        completion
    )
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(definition)
    server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)(prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(rename)
