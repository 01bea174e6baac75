"""Diagnostics for a client that pulls them (``textDocument/diagnostic``,
``workspace/diagnostic``): answered from the index and cached reports, never by
exporting; a client that does not pull has them pushed (publisher.py)."""

from __future__ import annotations

from lsprotocol import types

from .features import pull
from .server import ExportLensServer
from .snapshots import path_of


def document_diagnostic(ls: ExportLensServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    found = ls.document(params.text_document.uri)
    if found is None or not ls.pulls:  # not pulling: its diagnostics are pushed
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    doc, docs = found
    return pull.document_report(ls.session, doc, docs, params.previous_result_id)


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
    return pull.workspace_report(ls.session, [docs.get(p) for p in sorted(paths)], docs, previous)


def register(server: ExportLensServer) -> None:
    options = types.DiagnosticOptions(
        identifier=pull.IDENTIFIER, inter_file_dependencies=True, workspace_diagnostics=True
    )
    server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)(document_diagnostic)
    server.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)
