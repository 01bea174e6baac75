"""Suppressions in the editor: a finding the user has suppressed (``# exportlens:
ignore[...]``, a module table's ``ignore``) is not published, one that hides nothing is
(EL008), and each finding offers "Ignore EL204 on this line" (spec/suppressions.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from lsprotocol import types

from ...exporter.core import codes
from ...exporter.core.report import Finding
from ...exporter.core.sources import relative
from ...exporter.core.targets import Target
from ...exporter.spec.loading import PYPROJECT
from ...exporter.spec.suppressions import Suppressor, ignore_edit, traced
from ..session import Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot


class _Item(Protocol):  # diagnostics.Located (frozen: read-only here)
    @property
    def finding(self) -> Finding: ...
    @property
    def target(self) -> Target | None: ...


_I = TypeVar("_I", bound=_Item)


def screened(
    session: Session, root: Path, rel: str, found: Sequence[_I], docs: WorkspaceSnapshot
) -> tuple[list[_I], list[Finding]]:
    """The items of one file (``rel``) the user has not suppressed, in the text as it is
    now, and EL008 on each suppression in that file that hid nothing: judged only for the
    modules an export of this session ran to its verdict."""
    project = session.project(root, docs)
    modules = {m.target: m for _, m in session.index.under(root)}
    sources = docs.sources(root)
    suppressor = Suppressor(sources.text, modules, project.tables, project.text)
    kept = [item for item in found if suppressor.match(_spelled(item.target), item.finding) is None]
    judged: list[str] = []
    for key, result in list(session.results.items()):
        # only a module of this file (or, for pyproject.toml, any: its tables' ignore entries)
        # can have an unused suppression here; this file's findings of others were matched above
        if key.root != root or (rel != PYPROJECT and key.target.path != rel):
            continue
        target = str(key.target)
        # a verdict on another text of the module's file says nothing of the comments in this one
        if traced(result.report) and all(sources.text(path) == text for path, text in result.texts.items()):
            judged.append(target)
            for f in result.findings:
                if f.path != rel:  # this file's are matched above, at their lines of now
                    suppressor.match(target, f)
    unused = [f for _, f in suppressor.unused(judged) if f.path == rel]
    return kept, unused


def _spelled(target: Target | None) -> str | None:
    """``target`` as reports and pyproject.toml's tables spell it (what suppressions are keyed by)."""
    return None if target is None else str(target)


def ignore_action(
    root: Path, doc: DocumentSnapshot, docs: WorkspaceSnapshot, diagnostic: types.Diagnostic, workspace_edit
) -> types.CodeAction | None:
    """ "Ignore EL204 on this line": the comment added at the end of the diagnostic's line
    of the text as it is now (merged into a suppression already there)."""
    code = str(diagnostic.code or "")
    if doc.path.suffix != ".py" or code not in codes.BY_CODE or code == codes.UNUSED_SUPPRESSION.code:
        return None
    rel = relative(root, doc.path)
    edit = ignore_edit(doc.text, diagnostic.range.start.line + 1, code, rel)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Ignore {code} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=workspace_edit(root, [edit], docs, {doc.path: doc.version}),
    )
