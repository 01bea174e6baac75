"""Code actions: each fix in a report as a quick fix, "Export this module", and
"Create export spec for this module" for a module without one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import tomlkit
from lsprotocol import types

from ...exporter.core.report import Edit, Fix, Kind, Status, Verified
from ...exporter.core.targets import ModuleClass
from ...exporter.edit.scaffold import spec_edit
from ...exporter.spec.loading import PYPROJECT
from ..methods import CREATE_SPEC_COMMAND, EXPORT_COMMAND, EXPORT_KIND
from ..session import Result, Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from .diagnostics import SOURCE, Located, findings_for
from .fix_data import fixes_of, versions_for
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
        text_edits = [
            types.TextEdit(
                types.Range(lines.position(e.line, e.column), lines.position(e.end_line, e.end_column)), e.new_text
            )
            for e in edits
            if e.path == rel
        ]
        doc = types.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=versions.get(path))
        changes.append(types.TextDocumentEdit(text_document=doc, edits=text_edits))
    return types.WorkspaceEdit(document_changes=changes)


def made_for(result: Result | None, docs: WorkspaceSnapshot, paths: Iterable[Path]) -> dict[Path, int | None] | None:
    """The version of each document that edits found by ``result`` were made for: the one
    the export read where the document was open then; the editor's now where the export
    read the disk and the text is still the same. None where a file the export read from
    disk has changed since (no version can say so: the fix is left out until the next export)."""
    out: dict[Path, int | None] = {}
    for path in paths:
        now = docs.get(path)
        if result is not None and path in result.versions:
            out[path] = result.versions[path]
        elif result is not None and path in result.disk and result.disk[path] != now.text:
            return None
        else:
            out[path] = now.version  # found in the text as it is now, or as the export read it
    return out


def quick_fixes(
    session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, context: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """A quick fix per fix of each exportlens diagnostic in the request's context, read from
    the diagnostic's ``data``; found again where a client sent none back. A fix from an
    export is made for the documents the export read, not for today's text."""
    ours = [d for d in context if d.source == SOURCE]
    if not ours:
        return []
    root = session.root_of(doc.path)
    found: list[Located] | None = None  # the findings, for a diagnostic that carries no fixes
    actions = []
    for d in ours:
        fixes = fixes_of(d.data)
        if fixes is not None:
            made = [(fix, versions_for(d.data, fix, root, docs)) for fix in fixes]
        else:
            found = findings_for(session, doc.path, docs.texts) if found is None else found
            made = _found_again(found, d, root, docs)
        proving = _being_proven(session, root, d.data)
        for fix, versions in made:
            if versions is not None:
                edit = workspace_edit(root, fix.edits, docs, versions)
                actions.append(_fix_action(fix, len(made), d, edit, proving))
        ignore = ignore_action(root, doc, docs, d, workspace_edit)  # after the fixes: a fix is better
        actions += [ignore] if ignore is not None else []
    return actions


def _found_again(
    found: list[Located], d: types.Diagnostic, root: Path, docs: WorkspaceSnapshot
) -> list[tuple[Fix, dict[Path, int | None] | None]]:
    """The fixes of the finding a diagnostic without fixes in its data names: by its key
    where it has one, else by its code, message and line as the client shows them."""
    if isinstance(d.data, dict):
        keys = ("code", "line", "message")
        item = next((i for i in found if all(i.key[k] == d.data.get(k) for k in keys)), None)
    else:
        line, said = d.range.start.line + 1, (str(d.code or ""), d.message)
        item = next((i for i in found if (i.finding.code, i.finding.message) == said and i.finding.line == line), None)
    if item is None:
        return []
    return [(fix, made_for(item.result, docs, {root / e.path for e in fix.edits})) for fix in item.finding.fixes]


def _being_proven(session: Session, root: Path, data: object) -> bool:
    """Whether the export a diagnostic came from has fixes the owner is still proving: its
    verdict is the module's latest, failed (or an exported module's EL207) and not yet proven."""
    target = data.get("target") if isinstance(data, dict) else None
    result = session.result(root, target) if isinstance(target, str) else None
    if result is None or result.report.cached:
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
    lines = before.lines
    text_edit = types.TextEdit(
        types.Range(lines.position(edit.line, edit.column), lines.position(edit.end_line, edit.end_column)),
        edit.new_text,
    )
    doc = types.OptionalVersionedTextDocumentIdentifier(uri=pyproject.as_uri(), version=before.version)
    create = (
        []
        if exists
        else [types.CreateFile(uri=pyproject.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True))]
    )
    return types.WorkspaceEdit(document_changes=[*create, types.TextDocumentEdit(text_document=doc, edits=[text_edit])])
