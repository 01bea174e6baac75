"""Completion, definition and rename in pyproject.toml's module tables, and pull
diagnostics: answered from the text, the index and cached reports, never by exporting."""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .features import markup, pull, spec_complete, spec_nav, spec_rename
from .server import ExportLensServer
from .snapshots import path_of


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
    return spec_nav.definition(ls.session, doc, docs.texts, params.position)


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


def document_diagnostic(ls: ExportLensServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    found = ls.document(params.text_document.uri)
    if found is None or not ls.pulls:  # not pulling: its diagnostics are pushed
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    doc, docs = found
    return pull.document_report(ls.session, doc, docs.texts, params.previous_result_id)


def workspace_diagnostic(
    ls: ExportLensServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    if not ls.pulls:
        return types.WorkspaceDiagnosticReport(items=[])
    docs = ls.snapshot()
    previous = {p.uri: p.value for p in params.previous_result_ids}
    # the files a check put problems in, and those reported before (to clear them)
    paths = set(pull.problem_files(ls.session, docs.documents))
    paths |= {p for p in map(path_of, previous) if p is not None and p not in docs}
    return pull.workspace_report(ls.session, [docs.get(p) for p in sorted(paths)], docs.texts, previous)


def register(server: ExportLensServer) -> None:
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=spec_complete.TRIGGERS))(
        completion
    )
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(definition)
    server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)(prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(rename)
    options = types.DiagnosticOptions(
        identifier=pull.IDENTIFIER, inter_file_dependencies=True, workspace_diagnostics=True
    )
    server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)(document_diagnostic)
    server.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)
