"""Hover and go to definition in pyproject.toml's module tables: a target string leads to
its class; a dim name tells where it is used, its declared range and what the last export
found of it, and leads to the lines of code that constrain it."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ...exporter.core.report import Status
from ...exporter.core.targets import Target
from ...exporter.spec.spec_text import DimUse, Scope, scope_at, use_at, uses
from ..remap import range_now
from ..session import ModuleKey, Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from .hover import module_hover
from .spec_where import SpecDoc, bounds, reported, where_used


def hover(session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, position: types.Position) -> str | None:
    spec = SpecDoc.of(doc)
    if spec is None:
        return None
    offset = spec.offset(position)
    root = session.root_of(doc.path)
    scope = scope_at(spec.scopes, offset)
    if scope is not None and scope.header.start <= offset <= scope.header.end:
        module = session.index.by_target(root, Target.parse(scope.key[0]))  # the table's key: the user's text
        if module is None:
            return f"`{scope.key[0]}`: no such class in this project's index"
        spec_of, _ = session.spec_of(root, module, docs)
        return module_hover(session, root, module, spec_of.describe() if spec_of else None)
    family = spec.family_at(offset)
    use = use_at(family, offset)
    if use is None:
        return None
    return dim_hover(session, root, spec, scope_at(spec.scopes, use.start) or family[0], use.name)


def dim_hover(session: Session, root: Path, spec: SpecDoc, scope: Scope, name: str) -> str:
    target = scope.key[0]
    all_uses = [u for u in uses([s for s in spec.scopes if s.key[0] == target]) if u.name == name]
    lines = [f"**`{name}`**: a dim of `{target}`", "Used by: " + where_used(all_uses)]
    declared = bounds(spec.declared(scope, name))
    lines.append(
        f"Declared: `{name}` ∈ {declared}"
        if declared
        else f"Declared: no bounds in `dims` (torch's default range for `{name}`)"
    )
    for reported_as in reported(spec, scope):
        result = session.result(ModuleKey(root, reported_as))
        if result is None:
            continue
        report, of = result.report, f" of `{reported_as}`" if str(reported_as) != target else ""
        if report.status is Status.EXPORTED and report.summary:
            s = report.summary
            held = [str(c) for c in s.range_constraints if c.name == name]
            found = held + [str(e) for e in s.equalities if name in e.dims]
            lines.append(
                f"Last export{of}: ✓ " + (", ".join(f"`{c}`" for c in found) or f"`{name}` left unconstrained")
            )
        else:
            failed = [f for f in report.findings if name in f.dims]
            said = "; ".join(f"{f.path}:{f.line}: {f.message}" for f in failed[:3])
            lines.append(f"Last export{of}: ✗ {report.status.value}" + (f": {said}" if said else ""))
    return "\n\n".join(lines)


def definition(
    session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, position: types.Position
) -> list[types.Location]:
    spec = SpecDoc.of(doc)
    if spec is None:
        return []
    offset = spec.offset(position)
    root = session.root_of(doc.path)
    scope = scope_at(spec.scopes, offset)
    if scope is not None and scope.header.start <= offset <= scope.header.end:
        return _class_location(session, root, Target.parse(scope.key[0]), docs)
    use = use_at(spec.family_at(offset), offset)
    if use is None or scope is None:
        return []
    return [loc for t in reported(spec, scope) for loc in _constraints(session, root, t, use, docs)]


def _class_location(session: Session, root: Path, target: Target, docs: WorkspaceSnapshot) -> list[types.Location]:
    module = session.index.by_target(root, target)
    if module is None:
        return []
    path = root / module.path
    s = module.name_span
    return [types.Location(path.as_uri(), docs.get(path).lines.range(s.line, s.column, s.end_line, s.end_column))]


def _constraints(
    session: Session, root: Path, target: Target, use: DimUse, docs: WorkspaceSnapshot
) -> list[types.Location]:
    """The lines of code the last export found constraining the dim: its findings' lines
    (carried into the text of now, as diagnostics are)."""
    result = session.result(ModuleKey(root, target))
    if result is None:
        return []
    out = []
    for f in result.report.findings:
        if not f.path.endswith(".py") or use.name not in f.dims:
            continue
        path = root / f.path
        where = range_now(f, result.texts.get(path), docs.get(path))
        if where is not None:
            out.append(types.Location(path.as_uri(), where))
    return out
