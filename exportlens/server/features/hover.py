"""Hover: on a module's class name, its export verdict in the user's names; on a line
of forward, the shapes that line produces and the guards it added to the program."""

from __future__ import annotations

import re
from pathlib import Path

from ...exporter.core.report import LineShapes, ModuleReport, Status
from ...exporter.core.sources import relative
from ...exporter.core.targets import ModuleClass, Target
from ..remap import lines_now
from ..session import ModuleKey, Result, Session
from ..snapshots import DocumentSnapshot, WorkspaceSnapshot
from . import guard_lines

_ASSIGNED = re.compile(r"^\s*([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*(?::[^=]+)?(?<![=!<>])=(?!=)")


def hover(session: Session, doc: DocumentSnapshot, docs: WorkspaceSnapshot, line: int) -> str | None:
    """Markdown for 1-based ``line`` of a Python file: a module's verdict on its class
    name, else the shapes that line produces and the guards it made, else None."""
    if doc.path.suffix != ".py":
        return None
    root = session.root_of(doc.path)
    module = session.index.module_at(doc.path, line)
    if module is not None and module.name_span.line == line:
        spec, _ = session.spec_of(root, module, docs)
        where = spec.describe() if spec else None
        return "\n\n---\n\n".join(
            module_hover(session, root, module, where, t) for t in session.variants(root, module, docs)
        )
    found = shapes_at(session, root, doc, line)
    shapes = line_hover(found[0], doc.lines.line(line - 1)) if found else None
    guards = guard_lines.hover_text(guard_lines.guards_by_line(session, doc).get(line, []))
    return "\n\n".join(text for text in (shapes, guards) if text) or None


def module_hover(
    session: Session, root: Path, module: ModuleClass, spec_where: str | None, target: Target | None = None
) -> str:
    """One target's verdict: the module's own, or one of its variants (``target``)."""
    key = ModuleKey(root, target or Target.of(module))
    variant = key.target.variant
    lines = [
        f"**{module.name}{f'[{variant}]' if variant else ''}** — `torch.export`"
        + (f" (variant `{variant}`)" if variant else "")
    ]
    if spec_where is None:
        lines.append(
            "No example inputs yet: use the quick fix *Create export spec*, or add an `example_inputs()` staticmethod."
        )
        return "\n\n".join(lines)
    result = session.result(key)
    running = key in session.running
    if result is None:
        lines.append(
            "exporting…"
            if running
            else ("not exported yet" if session.trusted else "not exported: the workspace is not trusted")
        )
    else:
        lines += verdict(result.report, running) + lowered_lines(session, key, result)
    lines.append(f"Spec: `{spec_where}`")
    return "\n\n".join(lines)


def verdict(r: ModuleReport, running: bool = False) -> list[str]:
    """A report's paragraphs of the class name's hover: the exported signature and ranges, or the findings."""
    if r.status is Status.EXPORTED and r.summary:
        s = r.summary
        lines = [f"✓ exported in {r.seconds:.2f} s (torch {r.torch_version})" + (" — re-exporting…" if running else "")]
        lines.append(f"```python\n{s.signature}\n```")
        if s.range_constraints:
            lines.append("Ranges: " + ", ".join(f"`{c}`" for c in s.range_constraints))
        if s.equalities:
            lines.append("Equalities: " + ", ".join(f"`{e}`" for e in s.equalities))
        if s.artifact:
            lines.append(f"Saved: `{s.artifact}`")
        return lines
    return [f"✗ {r.status.value}: " + "; ".join(f"{f.code} line {f.line}: {f.message}" for f in r.findings[:5])]


def lowered_lines(session: Session, key: ModuleKey, result: Result) -> list[str]:
    """One line per deployment target: what lowering for it gave (time, artifact size, max error
    vs eager), or that it is being lowered."""
    out = []
    for to, lowered in result.lowered.items():
        lowering, codes = lowered.lowering, ", ".join(dict.fromkeys(f.code for f in lowered.findings))
        vs = " vs eager" if lowering.max_error is not None else ""
        out.append(f"`{to}`: {lowering.said()}{vs}" + (f" ({codes})" if codes else ""))
    compiling = [to for (module, to), now in session.compiling.items() if module == key and now]
    return out + [f"`{to}`: compiling…" for to in compiling if to not in result.lowered]


def shapes_at(session: Session, root: Path, doc: DocumentSnapshot, line: int) -> tuple[LineShapes, Target] | None:
    """The shapes recorded for the document's ``line`` (as it is now) by any exported module, with its target."""
    rel = relative(root, doc.path)
    for (r, target), result in session.results.items():
        summary = result.report.summary
        if r != root or summary is None:
            continue
        now = lines_now(result.texts.get(doc.path), doc.text)
        for ls in summary.line_shapes:
            if ls.path == rel and ls.shapes and now(ls.line) == line:
                return ls, target
    return None


def line_hover(shapes: LineShapes, code: str) -> str:
    target = assigned(code)
    result = label(shapes.shapes[-1], target)
    head = f"{target}: {result}" if target else result
    text = f"```python\n{head}\n```"
    if len(shapes.shapes) > 1:
        steps = "\n".join(f"- `{s}`" for s in shapes.shapes[:-1][:12])
        more = f"\n- … {len(shapes.shapes) - 13} more" if len(shapes.shapes) > 13 else ""
        text += f"\n\nintermediate shapes on this line:\n{steps}{more}"
    return text


def label(shape: str, target: str | None) -> str:
    """A line's shape as shown beside what it assigns: ``int`` for ``n = k.item()``, whose
    value is only named ``n`` (``int = n`` says nothing more)."""
    return shape.removesuffix(f" = {target}") if target else shape


def assigned(code: str) -> str | None:
    m = _ASSIGNED.match(code)
    return m.group(1).strip() if m else None
