"""CodeLenses above each nn.Module class: what its export did, and a click to run it; and
one per deployment target its spec names: what lowering it gave, and a click to lower it now."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types

from ...exporter.core.lowering import COMPILED
from ...exporter.core.report import ModuleReport, Status
from ...exporter.core.targets import Target
from ..methods import CREATE_SPEC_COMMAND, EXPORT_COMMAND, LOWER_COMMAND
from ..session import Session, State
from ..snapshots import DocumentSnapshot


def title(session: Session, root: Path, target: str, has_spec: bool) -> str:
    if not has_spec:
        return "needs example inputs"
    state = session.state(root, target)
    result = session.result(root, target)
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


def compile_title(session: Session, root: Path, target: str, to: str) -> str:
    """``to``'s lens: "▶ Compile for onnx", then "onnx: compiled in 3.6 s, 2.4 KB, max error 1e-07", or
    "onnx: failed (EL601)" (the first of its findings)."""
    compiling = session.compiling.get((root, target, to))
    if compiling is not None:
        return f"⟳ {to}: compiling…" if compiling else f"{to}: waiting to compile…"
    result = session.result(root, target)
    lowered = result.lowered.get(to) if result is not None else None
    if lowered is None:
        return f"▶ Compile for {to}"
    code = next((f.code for f in lowered.findings), None)
    return lowered.lowering.said(True) + (f" ({code})" if code and lowered.lowering.status != COMPILED else "")


def code_lenses(session: Session, doc: DocumentSnapshot, overrides: Mapping[Path, str]) -> list[types.CodeLens]:
    entry = session.index.get(doc.path)
    if entry is None:
        return []
    has_spec = session.has_spec(entry.root, [m.target for m in entry.modules], overrides)
    lenses = []
    for m in entry.modules:
        span = m.name_span
        where = types.Range(types.Position(span.line - 1, 0), types.Position(span.line - 1, 0))
        spec = has_spec.get(m.target, False)
        command = EXPORT_COMMAND if spec else CREATE_SPEC_COMMAND
        args = [{"uri": doc.uri, "target": m.target} | ({"save": True} if spec else {})]  # ▶ Export writes the .pt2
        for target in session.variants(entry.root, m, overrides):  # one lens per variant: "[small] ✓ exported"
            variant = Target.parse(target).variant
            said = (f"[{variant}] " if variant else "") + title(session, entry.root, target, spec)
            lenses.append(
                types.CodeLens(range=where, command=types.Command(title=said, command=command, arguments=args))
            )
            lenses += compile_lenses(session, entry.root, target, where, doc.uri, overrides) if spec else []
    return lenses


def compile_lenses(
    session: Session, root: Path, target: str, where: types.Range, uri: str, overrides: Mapping[Path, str]
) -> list[types.CodeLens]:
    """One per deployment target of ``target``'s spec, unless it failed to export (nothing to lower)."""
    result = session.result(root, target)
    if result is not None and result.report.status is Status.FAILED:
        return []
    variant = Target.parse(target).variant
    return [
        types.CodeLens(
            range=where,
            command=types.Command(
                title=(f"[{variant}] " if variant else "") + compile_title(session, root, target, to),
                command=LOWER_COMMAND,
                arguments=[{"uri": uri, "target": target, "to": to}],
            ),
        )
        for to in session.lower_to(root, target, overrides)
    ]
