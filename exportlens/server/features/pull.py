"""Pull diagnostics (``textDocument/diagnostic``, ``workspace/diagnostic``) for clients that
ask for them: the same diagnostics a push would carry, each report with a result id, so a
client that already holds a document's diagnostics is answered "unchanged"."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsprotocol import types

from ...exporter.spec.loading import PYPROJECT
from ..session import Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from . import diagnostics

IDENTIFIER = "exportlens"


def pulls(caps: types.ClientCapabilities | None) -> bool:
    """Whether the client pulls diagnostics and can be asked to pull again when an export
    lands (``workspace/diagnostic/refresh``): then none are pushed to it. A client that pulls
    but cannot be asked again is pushed them, and its pulls are answered with none, so that
    it shows each diagnostic once and a late export's too."""
    if not (caps and caps.text_document and caps.text_document.diagnostic is not None):
        return False
    return bool(caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support)


def result_id(doc: DocumentSnapshot, found: list[types.Diagnostic]) -> str:
    """The same for the same diagnostics of the same version."""
    return hashlib.sha1(f"{doc.version}|{found!r}".encode()).hexdigest()[:16]


def document_report(
    session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, previous: str | None
) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
    found = diagnostics.diagnostics(session, doc, docs)
    rid = result_id(doc, found)
    if rid == previous:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    return types.RelatedFullDocumentDiagnosticReport(items=found, result_id=rid)


def workspace_report(
    session: Session, documents: Iterable[DocumentSnapshot], docs: WorkspaceSnapshot, previous: Mapping[str, str]
) -> types.WorkspaceDiagnosticReport:
    """Reports for files the editor has not open (its open ones it pulls one by one)."""
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for doc in documents:
        found = diagnostics.diagnostics(session, doc, docs)
        rid = result_id(doc, found)
        if previous.get(doc.uri) == rid:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=doc.uri, version=None, result_id=rid))
        else:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(uri=doc.uri, version=None, items=found, result_id=rid)
            )
    return types.WorkspaceDiagnosticReport(items=items)


def problem_files(session: Session, open_paths: Iterable[Path]) -> list[Path]:
    """The files not open that a client must be told about, as a push client is: each
    project's pyproject.toml (its spec lines carry findings whether or not it is open), and
    the files a workspace check put problems in."""
    opened = set(open_paths)
    roots = {root for root, _ in session.results} | set(session.folders)
    out = {root / PYPROJECT for root in roots if (root / PYPROJECT).is_file()}
    out |= {
        root / f.path
        for (root, _), result in session.results.items()
        if root in session.checked
        for f in result.findings
        if f.path.endswith(".py")
    }
    return sorted(p for p in out if p not in opened)
