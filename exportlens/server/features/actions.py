"""Code actions: each fix in a report as a quick fix, "Export this module", and
"Create export spec for this module" for a module without one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from lsprotocol import types

from ...exporter.core.report import Edit, Finding, Fix
from ...exporter.static.discover import ModuleClass
from ...exporter.static.scaffold import spec_edit
from ...exporter.static.spec import PYPROJECT
from ..methods import EXPORT_COMMAND, EXPORT_KIND
from ..positions import Lines
from ..session import Session
from .diagnostics import SOURCE, findings_for

Versions = Callable[[Path], "int | None"]  # an open document's version, None when closed


def workspace_edit(
    root: Path, edits: tuple[Edit, ...] | list[Edit], text_of: Callable[[Path], str], version_of: Versions, utf16: bool = True
) -> types.WorkspaceEdit:
    """Edits grouped per file, each against the version the editor has, so a stale one is refused."""
    changes: list[types.TextDocumentEdit] = []
    for rel in dict.fromkeys(e.path for e in edits):
        path = root / rel
        lines = Lines(text_of(path))
        text_edits = [
            types.TextEdit(
                types.Range(lines.position(e.line, e.column, utf16=utf16), lines.position(e.end_line, e.end_column, utf16=utf16)),
                e.new_text,
            )
            for e in edits
            if e.path == rel
        ]
        doc = types.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=version_of(path))
        changes.append(types.TextDocumentEdit(text_document=doc, edits=text_edits))
    return types.WorkspaceEdit(document_changes=changes)


def quick_fixes(
    session: Session,
    path: Path,
    params: types.CodeActionParams,
    overrides: Mapping[Path, str],
    text_of: Callable[[Path], str],
    version_of: Versions,
    utf16: bool = True,
) -> list[types.CodeAction]:
    """A quick fix per fix of each exportlens diagnostic in the request's context."""
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and isinstance(d.data, dict)]
    if not ours:
        return []
    root = session.root_of(path)
    found = findings_for(session, path, overrides)
    actions = []
    for d in ours:
        finding = _match(found, d.data)
        if finding is None:
            continue
        for fix in finding.fixes:
            actions.append(_fix_action(fix, finding, d, root, text_of, version_of, utf16))
    return actions


def _match(found: list[tuple[Finding, str | None]], data: dict) -> Finding | None:
    for f, _ in found:
        if f.code == data.get("code") and f.line == data.get("line") and f.message == data.get("message"):
            return f
    return None


def _fix_action(fix: Fix, finding: Finding, diagnostic: types.Diagnostic, root: Path, text_of, version_of, utf16: bool) -> types.CodeAction:
    return types.CodeAction(
        title=fix.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix.preferred or len(finding.fixes) == 1,
        edit=workspace_edit(root, fix.edits, text_of, version_of, utf16),
    )


def module_actions(
    session: Session, path: Path, module: ModuleClass | None, has_spec: bool, spec_edit: Callable[[], types.WorkspaceEdit | None]
) -> list[types.CodeAction]:
    """Actions on the module under the cursor, whatever its diagnostics."""
    if module is None:
        return []
    args = [{"uri": path.as_uri(), "target": module.target}]
    if not has_spec:
        edit = spec_edit()
        if edit is None:
            return []
        return [types.CodeAction(title=f"Create export spec for {module.name}", kind=types.CodeActionKind.QuickFix, edit=edit)]
    if not session.trusted:
        return []
    export = types.Command(title=f"Export {module.name} to .pt2", command=EXPORT_COMMAND, arguments=[{**args[0], "save": True}])
    return [types.CodeAction(title=f"Export {module.name} to .pt2", kind=EXPORT_KIND, command=export)]


def create_spec_edit(
    module: ModuleClass,
    root: Path,
    path: Path,
    folders: list[Path],
    text_of: Callable[[Path], str],
    version_of: Versions,
    open_files: set[Path],
    utf16: bool = True,
) -> types.WorkspaceEdit:
    """Add ``module``'s scaffolded spec to its project's pyproject.toml; where there is none
    above the file, create one in the workspace folder that holds it."""
    pyproject = root / PYPROJECT
    exists = pyproject.is_file() or pyproject in open_files
    if not exists:
        folder = next((f for f in folders if f in path.parents), path.parent)
        pyproject = folder / PYPROJECT
        module = replace(module, path=path.relative_to(folder).as_posix())
    before = text_of(pyproject) if exists else ""
    edit = spec_edit(module, text_of(path), before if exists else None)
    lines = Lines(before)
    text_edit = types.TextEdit(
        types.Range(lines.position(edit.line, edit.column, utf16=utf16), lines.position(edit.end_line, edit.end_column, utf16=utf16)),
        edit.new_text,
    )
    doc = types.OptionalVersionedTextDocumentIdentifier(uri=pyproject.as_uri(), version=version_of(pyproject))
    create = [] if exists else [types.CreateFile(uri=pyproject.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True))]
    return types.WorkspaceEdit(document_changes=[*create, types.TextDocumentEdit(text_document=doc, edits=[text_edit])])
