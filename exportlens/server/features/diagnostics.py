"""Findings -> LSP diagnostics for one file: syntax errors from the index, spec errors,
and every export finding located in that file (the line that broke the export may be
in a helper file that another module imports)."""

from __future__ import annotations

import copy
import operator
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from lsprotocol import types

from ...exporter.core import codes
from ...exporter.core.report import Finding, Kind, Related, Severity
from ...exporter.core.sources import read_text, relative
from ...exporter.core.targets import ModuleClass, Target
from ...exporter.spec.loading import PYPROJECT
from ..positions import Lines
from ..remap import follow
from ..session import Result, Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from .fix_data import DISK, FIXES, VERSIONS, carried
from .suppressed import screened

SOURCE = "exportlens"
FINDING_ID = "id"  # the key of a diagnostic's data that names its finding (``Finding.id``)
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


@dataclass(frozen=True)
class Located:
    """A finding in one file, with where it came from."""

    finding: Finding  # its position in the text as it is now
    target: Target | None = None  # the module it belongs to; None: the file's own (a syntax error)
    result: Result | None = None  # the export that found it; None: found in the text as it is now
    mirror: bool = False  # a spec line's finding again on its class line: a hint (not a second problem)

    @property
    def key(self) -> dict:
        """What a diagnostic carries to name its finding (beside its fixes: ``carried``): its
        module, and its id, which it keeps wherever today's text has moved it."""
        return {"target": str(self.target) if self.target else None, FINDING_ID: self.finding.id}

    def __str__(self) -> str:
        return f"{self.finding.code} line {self.finding.line} ({self.target or 'static'})"


def findings_for(session: Session, path: Path, docs: WorkspaceSnapshot) -> list[Located]:
    """Every finding located in ``path``: static ones first, then those of exports."""
    root = session.root_of(path)
    rel = relative(root, path)
    entry = session.index.get(path)
    out = [Located(f) for f in entry.findings] if entry is not None else []
    # spec problems: a table's on pyproject.toml lines, an example_inputs() method's in its own file,
    # so only those modules are resolved (this runs for every open file each time an export lands)
    if path.name == PYPROJECT:
        tables = session.project(root, docs).tables
        classes = {Target.parse(t).module for t in tables}  # a class with variants: one table each
        modules = [m for _, m in session.index.under(root) if m.target in classes]
    else:
        modules = list(entry.modules) if entry is not None else []
    plan = session.plan(root, modules, docs)
    out += [Located(f) for f in plan.findings if f.path == rel]
    for planned in plan.modules:
        out += [Located(f, Target.of(planned.module, planned.variant)) for f in planned.findings if f.path == rel]
    now = docs.texts.get(path)
    for (r, target), result in session.results.items():
        if r == root:
            found = [
                Located(f, target, result) for f in result.findings if f.path == rel and f.kind is not Kind.SPEC_ERROR
            ]
            then = result.texts.get(path)
            if then is not None and found:
                now = read_text(path) if now is None else now  # a closed file: read once, for every result
                found = _in_text_of_now(found, then, now)
            out += found
    return _unique(out)


def _in_text_of_now(found: list[Located], then: str, now: str) -> list[Located]:
    """Findings of an export at their lines in the text of now (its positions are in the
    text it read); one whose own lines were edited since stays until the next verdict."""
    out = []
    for item in found:
        moved = follow(item.finding, then, now)
        out.append(replace(item, finding=moved))
    return out


def _unique(items: Iterable[Located]) -> list[Located]:
    seen, out = set(), []
    for item in items:
        f = item.finding
        key = (f.code, f.line, f.column, f.message)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def to_diagnostic(item: Located, lines: Lines, root: Path) -> types.Diagnostic:
    f = item.finding
    related = [
        types.DiagnosticRelatedInformation(
            types.Location(
                (root / r.path).as_uri(), types.Range(types.Position(r.line - 1, 0), types.Position(r.line - 1, 0))
            ),
            r.message,
        )
        for r in f.related
    ]
    return types.Diagnostic(
        range=lines.range(f.line, f.column, f.end_line, f.end_column),
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        code_description=types.CodeDescription(href=codes.docs_url(f.code)),
        source=SOURCE,
        related_information=related or None,
        data={**item.key, **carried(f.fixes, item.result, root)},  # its fixes: code actions read them back
    )


def as_seen(diagnostic: types.Diagnostic) -> types.Diagnostic:
    """``diagnostic`` less the fixes its data carries (``carried``): what the client shows, and
    the finding it names. A proof that lands changes only those fixes, and a code action takes
    a finding's fixes from the session's latest result (``actions.quick_fixes``): no reason
    to push a file's diagnostics again (``publisher.Seen``)."""
    if not isinstance(diagnostic.data, dict):
        return diagnostic
    seen = copy.copy(diagnostic)
    seen.data = {k: v for k, v in diagnostic.data.items() if k not in (FIXES, VERSIONS, DISK)}
    return seen


def diagnostics(session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot) -> list[types.Diagnostic]:
    root = session.root_of(doc.path)
    found, unused = screened(session, root, relative(root, doc.path), findings_for(session, doc.path, docs), docs)
    found += [Located(f) for f in unused]  # suppressions that hide nothing (EL008)
    if doc.path == root / PYPROJECT:
        found = [_pointing_at_class(session, root, item) for item in found]
    else:
        found += _mirrors(session, root, doc.path, docs)
    out = []
    for item in found:
        if item.finding.code != codes.SPEC_MISSING.code:
            out.append(to_diagnostic(item, doc.lines, root))
            out[-1].severity = types.DiagnosticSeverity.Hint if item.mirror else out[-1].severity
    return out


def _module_of(session: Session, root: Path, item: Located) -> ModuleClass | None:
    return session.index.by_target(root, item.target) if item.target else None


def _pointing_at_class(session: Session, root: Path, item: Located) -> Located:
    """A spec line's finding, linked to the class it is the spec of: the code the user wrote."""
    module = _module_of(session, root, item)
    if module is None or item.finding.path != PYPROJECT:
        return item
    here = Related(module.path, module.name_span.line, f"{module.name} is defined here")
    return replace(item, finding=replace(item.finding, related=(*item.finding.related, here)))


def _mirrors(session: Session, root: Path, path: Path, docs: WorkspaceSnapshot) -> list[Located]:
    """The findings on spec lines of the modules ``path`` defines, again on each class's
    name, linking back to the spec line: seen where the user works, whether or not
    pyproject.toml is open. A hint, which the Problems panel does not count twice."""
    entry = session.index.get(path)
    if entry is None or not entry.modules or not (root / PYPROJECT).is_file() and root / PYPROJECT not in docs:
        return []
    out = []
    spec = _spec_findings(session, root, docs)
    for item in spec:
        module = _module_of(session, root, item)
        if module is None or root / module.path != path or item.finding.path != PYPROJECT:
            continue
        f, at = item.finding, module.name_span
        back = Related(PYPROJECT, f.line, f"said on this line of the export spec for {module.name}")
        moved = replace(f, path=relative(root, path), line=at.line, column=at.column, end_line=at.end_line)
        out.append(replace(item, finding=replace(moved, end_column=at.end_column, related=(back,)), mirror=True))
    return out


_last_spec: list[tuple[Path, tuple[object, ...], list[Located]]] = []  # one: the last made


def _spec_findings(session: Session, root: Path, docs: WorkspaceSnapshot) -> list[Located]:
    """pyproject.toml's findings, screened, kept while what they are made from is the same:
    every open file mirrors them, and making them plans every module with a table and reads
    every exported module's file, which for each of two hundred files published at once would
    be most of the server's time in a storm."""
    key = _made_from(session, root, docs)
    if _last_spec and _last_spec[0][0] == root and len(_last_spec[0][1]) == len(key):
        if all(map(operator.is_, _last_spec[0][1], key)):
            return _last_spec[0][2]
    spec, _ = screened(session, root, PYPROJECT, findings_for(session, root / PYPROJECT, docs), docs)
    _last_spec[:] = [(root, key, spec)]
    return spec


def _made_from(session: Session, root: Path, docs: WorkspaceSnapshot) -> tuple[object, ...]:
    """What the spec's findings are made from, each object by identity (held by the cache, so
    never another's): the project's specs (one per pyproject.toml text), the index's entry of
    each file (a new one for each scan), the editor's texts, and the project's results with a
    finding on its lines (not every verdict that lands: most have none there), with their
    lowerings (which a result gains in place)."""
    return (
        session.project(root, docs),
        *(e for _, e in list(session.index.files.items()) if e.root == root),
        *docs.texts.values(),
        *(
            x
            for (r0, _), r in list(session.results.items())
            if r0 == root and _on_spec_lines(r)
            for x in (r, *r.lowered.values())
        ),
    )


def _on_spec_lines(result: Result) -> bool:
    return any(f.path == PYPROJECT and f.kind is not Kind.SPEC_ERROR for f in result.findings)
