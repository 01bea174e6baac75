"""CodeLenses above each nn.Module class: what its export did, and a click to run it; and
one per deployment target its spec names: what lowering it gave, and a click to lower it now."""

from __future__ import annotations

from lsprotocol import types

from ...exporter.core.lowering import COMPILED
from ...exporter.core.report import ModuleReport, Status
from ...exporter.core.targets import Target
from ..methods import CREATE_SPEC_COMMAND, EXPORT_COMMAND, LOWER_COMMAND
from ..session import ModuleKey, Session, State
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot


def title(session: Session, key: ModuleKey, has_spec: bool) -> str:
    if not has_spec:
        return "needs example inputs"
    state = session.state(key)
    result = session.result(key)
    if state is State.RUNNING:
        if result is not None and result.report.cached:
            return f"{verdict(result.report)} · cached, checking again…"
        return "⟳ exporting…"
    if result is None:
        return "▶ Export" if session.trusted else "▶ Export (workspace not trusted)"
    return verdict(result.report) + (" · cached" if result.report.cached else "")


def verdict(report: ModuleReport) -> str:
    if report.status is Status.EXPORTED:
        return f"✓ exported {report.seconds:.1f} s"
    problems = len(report.errors) or len(report.findings)
    return f"✗ {problems} problem{'s' if problems != 1 else ''}"


def compile_title(session: Session, key: ModuleKey, to: str) -> str:
    """``to``'s lens: "▶ Compile for onnx", then "onnx: compiled in 3.6 s, 2.4 KB, max error 1e-07", or
    "onnx: failed (EL601)" (the first of its findings)."""
    compiling = session.compiling.get((key, to))
    if compiling is not None:
        return f"⟳ {to}: compiling…" if compiling else f"{to}: waiting to compile…"
    result = session.result(key)
    lowered = result.lowered.get(to) if result is not None else None
    if lowered is None:
        return f"▶ Compile for {to}"
    code = next((f.code for f in lowered.findings), None)
    return lowered.lowering.said(True) + (f" ({code})" if code and lowered.lowering.status != COMPILED else "")


def code_lenses(session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot) -> list[types.CodeLens]:
    entry = session.index.get(doc.path)
    if entry is None:
        return []
    has_spec = session.has_spec(entry.root, [Target.of(m) for m in entry.modules], docs)
    lenses = []
    for m in entry.modules:
        span = m.name_span
        where = types.Range(types.Position(span.line - 1, 0), types.Position(span.line - 1, 0))
        spec = has_spec.get(Target.of(m), False)
        command = EXPORT_COMMAND if spec else CREATE_SPEC_COMMAND
        args = [{"uri": doc.uri, "target": m.target} | ({"save": True} if spec else {})]  # ▶ Export writes the .pt2
        for target in session.variants(entry.root, m, docs):  # one lens per variant: "[small] ✓ exported"
            key, variant = ModuleKey(entry.root, target), target.variant
            said = (f"[{variant}] " if variant else "") + title(session, key, spec)
            lenses.append(
                types.CodeLens(range=where, command=types.Command(title=said, command=command, arguments=args))
            )
            lenses += compile_lenses(session, key, where, doc.uri, docs) if spec else []
    return lenses


def compile_lenses(
    session: Session, key: ModuleKey, where: types.Range, uri: str, docs: WorkspaceSnapshot
) -> list[types.CodeLens]:
    """One per deployment target of the module's spec, unless it failed to export (nothing to lower)."""
    result = session.result(key)
    if result is not None and result.report.status is Status.FAILED:
        return []
    variant = key.target.variant
    return [
        types.CodeLens(
            range=where,
            command=types.Command(
                title=(f"[{variant}] " if variant else "") + compile_title(session, key, to),
                command=LOWER_COMMAND,
                arguments=[{"uri": uri, "target": str(key.target), "to": to}],
            ),
        )
        for to in session.lower_to(key, docs)
    ]
