"""Code actions: each fix in a report as a quick fix, "Export this module", and
"Create export spec for this module" for a module without one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import tomlkit
from lsprotocol import types

from ...exporter.core.report import Edit, Fix, Kind, Status, Verified
from ...exporter.core.targets import ModuleClass, Target
from ...exporter.edit.scaffold import spec_edit
from ...exporter.spec.loading import PYPROJECT
from ..methods import CREATE_SPEC_COMMAND, EXPORT_COMMAND, EXPORT_KIND
from ..positions import Lines
from ..session import ModuleKey, Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from .diagnostics import FINDING_ID, SOURCE, Located, findings_for
from .fix_data import carried, fixes_of, versions_for
from .suppressed import ignore_action


def workspace_edit(
    root: Path, edits: Iterable[Edit], docs: WorkspaceSnapshot, versions: Mapping[Path, int | None]
) -> types.WorkspaceEdit:
    """Edits grouped per file, each naming the version of its document they were made for
    (None: no check), so that the editor refuses a stale one."""
    edits = list(edits)
    changes: list[types.TextDocumentEdit] = []
    for rel in dict.fromkeys(e.path for e in edits):
        path = root / rel
        lines = docs.get(path).lines
        text_edits = [text_edit(lines, e) for e in edits if e.path == rel]
        doc = types.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=versions.get(path))
        changes.append(types.TextDocumentEdit(text_document=doc, edits=text_edits))
    return types.WorkspaceEdit(document_changes=changes)


def text_edit(lines: Lines, edit: Edit) -> types.TextEdit:
    """``edit`` in the positions the client counts in."""
    return types.TextEdit(lines.range(edit.line, edit.column, edit.end_line, edit.end_column), edit.new_text)


def quick_fixes(
    session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, context: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """A quick fix per fix of each exportlens diagnostic in the request's context: those of its
    finding as the session has it now (a proof that landed since the diagnostic was pushed is
    not pushed again: ``diagnostics.as_seen``), else those its ``data`` carries. A fix from an
    export is made for the documents the export read, not for today's text."""
    ours = [d for d in context if d.source == SOURCE]
    if not ours:
        return []
    root = session.root_of(doc.path)
    found = findings_for(session, doc.path, docs)
    actions = []
    for d in ours:
        item = _found_again(found, d, doc.lines)
        data: object = d.data
        if item is not None:
            fixes, data = item.finding.fixes, carried(item.finding.fixes, item.result, root)
        else:  # not the session's any more (a newer verdict is on its way), or a mirror: as the client sent it
            fixes = fixes_of(d.data) or ()
        proving = _being_proven(session, root, d.data)
        for fix in fixes:
            versions = versions_for(data, fix, root, docs)
            if versions is not None:
                edit = workspace_edit(root, fix.edits, docs, versions)
                actions.append(_fix_action(fix, len(fixes), d, edit, proving))
        ignore = ignore_action(root, doc, docs, d, workspace_edit)  # after the fixes: a fix is better
        actions += [ignore] if ignore is not None else []
    return actions


def _found_again(found: list[Located], d: types.Diagnostic, lines: Lines) -> Located | None:
    """The finding a diagnostic names: by the id its data carries, else (a client that sent no
    data back) by its code and range. Never by its message, which a client may rewrap."""
    said = d.data.get(FINDING_ID) if isinstance(d.data, dict) else None
    if isinstance(said, str):
        return next((i for i in found if i.finding.id == said), None)
    code = str(d.code or "")
    return next((i for i in found if i.finding.code == code and _range_of(i, lines) == d.range), None)


def _range_of(item: Located, lines: Lines) -> types.Range:
    f = item.finding
    return lines.range(f.line, f.column, f.end_line, f.end_column)


def _being_proven(session: Session, root: Path, data: object) -> bool:
    """Whether the export a diagnostic came from has fixes the owner is still proving: its
    verdict is the module's latest, failed (or an exported module's EL207) and its proofs are
    not done (a fix they left unverified, its export stopped, is not being proven)."""
    target = data.get("target") if isinstance(data, dict) else None
    result = session.result(ModuleKey(root, Target.parse(target))) if isinstance(target, str) else None
    if result is None or result.report.cached or result.proven:
        return False
    report = result.report
    return report.status is Status.FAILED or any(f.kind is Kind.SPECIALIZATION for f in report.findings)


def _fix_action(
    fix: Fix, choices: int, diagnostic: types.Diagnostic, edit: types.WorkspaceEdit, proving: bool = False
) -> types.CodeAction:
    # preferred (applied by "fix all" and auto-fix on save) only once the owner proved it and its
    # program agreed with eager on its probes: a job's own choice is only the fix to try first.
    # One the proof tries (the preferred, a remedy with probes) says so until it lands: applied
    # before, a problem its proof would have found may follow
    tried = fix.verified is Verified.UNVERIFIED and (fix.preferred or bool(fix.probes))
    return types.CodeAction(
        title=f"{fix.action} (proving…)" if proving and tried else fix.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=(fix.preferred or choices == 1) and fix.passes_probes,
        edit=edit,
    )


def module_actions(
    session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, module: ModuleClass, has_spec: bool
) -> list[types.CodeAction]:
    """Actions on the module under the cursor, whatever its diagnostics. Raises where its
    spec cannot be scaffolded (the handler logs why)."""
    if not has_spec:  # the command proves its guess by exporting it, then writes and shows it
        create = types.Command(
            title=f"Create export spec for {module.name}",
            command=CREATE_SPEC_COMMAND,
            arguments=[{"uri": doc.uri, "target": module.target}],
        )
        return [types.CodeAction(title=create.title, kind=types.CodeActionKind.QuickFix, command=create)]
    if not session.trusted:
        return []
    args = {"uri": doc.uri, "target": module.target, "save": True}
    export = types.Command(title=f"Export {module.name} to .pt2", command=EXPORT_COMMAND, arguments=[args])
    return [types.CodeAction(title=f"Export {module.name} to .pt2", kind=EXPORT_KIND, command=export)]


def create_spec_edit(
    module: ModuleClass, root: Path, path: Path, docs: WorkspaceSnapshot, table: tomlkit.items.Table | None = None
) -> types.WorkspaceEdit:
    """Add ``module``'s scaffolded spec to its project's pyproject.toml; where there is none
    above the file, create one at the project root (the workspace folder that holds it:
    ``spec.find_root``), which the module's path is already relative to."""
    pyproject = root / PYPROJECT
    exists = pyproject.is_file() or pyproject in docs
    before = docs.get(pyproject) if exists else DocumentSnapshot(pyproject, "", None, docs.encoding)
    edit = spec_edit(module, docs.get(path).text, before.text if exists else None, table)
    doc = types.OptionalVersionedTextDocumentIdentifier(uri=pyproject.as_uri(), version=before.version)
    create = (
        []
        if exists
        else [types.CreateFile(uri=pyproject.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True))]
    )
    spec = types.TextDocumentEdit(text_document=doc, edits=[text_edit(before.lines, edit)])
    changes: list[types.TextDocumentEdit | types.CreateFile] = [*create, spec]
    return types.WorkspaceEdit(document_changes=changes)
