"""The guard record of a successful export (torch side): every guard the shape env added
and every runtime assertion the program carries, said over the user's dim names and put
on the user's line that made it, the same attribution findings use (``locate.GuardLog``)."""

from __future__ import annotations

from typing import Any

import sympy
import torch
from torch.export import ExportedProgram

from ...core.guards import Guard, GuardKind
from ..compat.messages import SYMBOL
from ..compat.shape_env import shape_env_sources, source_name
from ..context import Context
from ..locate import Event, GuardLog, deepest_in_text
from .symbols import atom, axis_as_code, pretty

Names = dict[sympy.Symbol, sympy.Expr]  # torch's symbol -> its size over the user's dim names
_SIMPLIFY_OPS = 24


def guard_record(ep: ExportedProgram, ctx: Context, log: GuardLog, names: Names) -> tuple[Guard, ...]:
    """Declared ranges first, then the guards in the order torch met them; each once."""
    by_source, asserted = _source_names(log, ctx, names), _asserted(ep)
    out: list[Guard] = [*_ranges(ep, by_source | names)]  # (the program's symbols: named by its placeholders)
    names = names | by_source
    for event in log.events:
        guard = _from_event(event, ctx, names, asserted)
        if guard is not None:
            out.append(guard)
    met = {g.text for g in out if g.kind is GuardKind.RUNTIME_ASSERT}
    for expr, node in asserted.items():  # an assertion no recorded guard made: on its node's line
        text = _said(expr, names)
        if text is not None and text not in met:
            out.append(_placed(GuardKind.RUNTIME_ASSERT, text, ctx, node.meta.get("stack_trace"), _dims(expr, names)))
    # torch records a size made constant twice, as the guard `== 8` and as the constant: said once, as the constant
    pinned = {(g.text, g.path, g.line) for g in out if g.kind is GuardKind.SPECIALIZATION}
    return tuple(
        dict.fromkeys(g for g in out if g.kind is GuardKind.SPECIALIZATION or (g.text, g.path, g.line) not in pinned)
    )


def _from_event(event: Event, ctx: Context, names: Names, asserted: dict[sympy.Basic, Any]) -> Guard | None:
    expr = event.expr
    text = _said(expr, names)
    if text is None:
        return None
    if event.kind == "replace" and isinstance(expr, sympy.Eq) and expr.rhs.is_number:
        kind = GuardKind.SPECIALIZATION
    elif expr in asserted:
        kind = GuardKind.RUNTIME_ASSERT
    else:
        kind = GuardKind.RELATION if len(expr.xreplace(names).free_symbols) > 1 else GuardKind.RANGE
    frame = event.frame
    path = ctx.sources.rel(frame.filename) if frame else None
    value = int(expr.rhs) if kind is GuardKind.SPECIALIZATION else None
    return Guard(kind, text, path, frame.line if frame else None, _dims(expr, names), value)


def _dims(expr: Any, names: Names) -> tuple[str, ...]:
    """The sizes a guard names, as its text names them: data, so that no reader parses the text."""
    return tuple(sorted(str(s) for s in expr.xreplace(names).free_symbols))


def _said(expr: Any, names: Names) -> str | None:
    """The guard over the user's names, simplified; None where nothing is left to say (it holds
    by the spec's own declarations) or a symbol has no user's name (never shown as ``s77``)."""
    said = expr.xreplace(names)
    try:  # a large guard as it is: simplify's time grows fast with its size, and a model has hundreds
        said = sympy.simplify(said) if sympy.count_ops(said) <= _SIMPLIFY_OPS else said
    except (TypeError, ValueError, AttributeError, RecursionError):  # (torch's own functions sympy cannot simplify)
        pass
    if said in (sympy.true, sympy.false):
        return None
    text = pretty(said)
    return None if SYMBOL.search(text) else text


def _source_names(log: GuardLog, ctx: Context, names: Names) -> Names:
    """Each symbol named by the input axis torch made it for: after torch unified two sizes the
    program keeps one symbol for both, so a placeholder's name can be the other input's. A size
    the spec left unnamed (``?``) is said as the code reads it (``b.shape[0]``)."""
    out: Names = {}
    for sym, sources in shape_env_sources(log.shape_env).items():
        source = next(filter(None, map(source_name, sources)), "")
        label, axis = ctx.built.names.by_source.get(source), axis_as_code(source)
        if label is not None:  # a derived label (``n + 1``) keeps its expression over the root
            out[sym] = sympy.Symbol(label) if label.isidentifier() else names.get(sym, sympy.Symbol(atom(label)))
        elif axis is not None:
            out[sym] = sympy.Symbol(axis)
    return out


def _placed(kind: GuardKind, text: str, ctx: Context, stack_trace: str | None, dims: tuple[str, ...]) -> Guard:
    frame = deepest_in_text(ctx.sources, stack_trace)
    path = ctx.sources.rel(frame.filename) if frame else None
    return Guard(kind, text, path, frame.line if frame else None, dims)


def _ranges(ep: ExportedProgram, names: Names) -> list[Guard]:
    """The program's range constraints as guards (``2 <= n <= 48``); a derived dim's are its root's."""
    out = []
    for sym, vr in ep.range_constraints.items():
        if not isinstance(sym, sympy.Symbol):
            continue
        low, high = _finite(vr.lower), _finite(vr.upper)
        dim = _said(sym, names) if sym in names else None
        if dim is None or (low is None and high is None):
            continue
        text = " <= ".join(str(p) for p in (low, dim, high) if p is not None)
        out.append(Guard(GuardKind.RANGE, text, dims=_dims(sym, names)))
    return out


def _finite(v: Any) -> int | None:
    try:
        return None if str(v).lstrip("-") in ("int_oo", "oo") else int(v)
    except (TypeError, ValueError):
        return None


def _asserted(ep: ExportedProgram) -> dict[sympy.Basic, Any]:
    """Each runtime assertion's expression (``u0 <= 256``) -> its ``_assert_scalar`` node."""
    out: dict[sympy.Basic, Any] = {}
    for node in ep.graph.nodes:
        if node.op != "call_function" or "assert" not in str(node.target) or not node.args:
            continue
        cond = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
        if isinstance(cond, torch.SymBool):
            out.setdefault(cond.node.expr, node)
    return out
