"""Fixes for constraint violations, as edits on the spec, checked by exporting again (torch side).

torch's "Suggested fixes" are applied with its own
``refine_dynamic_shapes_from_suggested_fixes``; comparing the refined
dynamic_shapes with the user's tells what changed for each named dim. Where
torch suggests nothing, the guard that cut the declared range is solved for the
dim with sympy. A fix is offered only when exporting with it gets past the
problem it fixes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import sympy
from torch._dynamo.exc import UserError, UserErrorType
from torch.export import Dim
from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes

from ..core import codes
from ..core.report import Finding, Fix
from ..static.edits import edit_between, set_dim_bounds, set_dim_call, substitute_dim
from .context import Context
from .explain import violations

TryExport = Callable[[Any], Exception | None]


@dataclass(frozen=True)
class Change:
    """What a fix does to one named dim."""

    dim: str
    kind: str  # "bounds" | "static" | "substitute"
    min: int | None = None
    max: int | None = None
    value: str = ""  # the static size, or the dim / expression it becomes

    @property
    def title(self) -> str:
        if self.kind == "static":
            return f"Make `{self.dim}` static: size {self.value}"
        if self.kind == "substitute":
            return f"Declare `{self.dim} = {self.value}`"
        bounds = ", ".join(f"{k}={v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None)
        return f"Set `{self.dim}` to Dim('{self.dim}', {bounds})"


_CONSTRAINT_CODES = {
    c.code for c in (codes.RANGE_VIOLATION, codes.EQUALITY_VIOLATION, codes.RELATION_VIOLATION, codes.SPECIALIZED, codes.GUARD_VIOLATION)
}


def constraint_fixes(exc: BaseException, findings: list[Finding], ctx: Context, try_export: TryExport) -> list[Finding]:
    if not (isinstance(exc, UserError) and exc.error_type == UserErrorType.CONSTRAINT_VIOLATION):
        return findings
    changes = suggested(exc.msg, ctx)
    changes += [c for c in solved(findings, ctx) if c.dim not in {x.dim for x in changes}]
    verified = _verify(changes, ctx, exc, try_export)
    out = []
    for finding in findings:
        if finding.code not in _CONSTRAINT_CODES:
            out.append(finding)
            continue
        mine = [c for c in verified if _mentions(finding, c.dim)]
        fixes = tuple(f for f in (_as_fix(c, ctx, i == 0) for i, c in enumerate(mine)) if f is not None)
        out.append(replace(finding, fixes=finding.fixes + fixes))
    return out


def _mentions(finding: Finding, dim: str) -> bool:
    return f"`{dim}`" in finding.message


# -- what to change ----------------------------------------------------------------


def suggested(msg: str, ctx: Context) -> list[Change]:
    """torch's suggested fixes, as per-dim changes (read off the refined dynamic_shapes)."""
    if "Suggested fixes:" not in msg or ctx.built.dynamic_shapes is None:
        return []
    try:
        refined = refine_dynamic_shapes_from_suggested_fixes(msg, ctx.built.dynamic_shapes)
    except Exception:
        return []
    changes: dict[str, Change] = {}
    for old, new in _pairs(ctx.built.dynamic_shapes, refined):
        name = getattr(old, "__name__", None)
        if name is None or name in changes or hasattr(old, "root"):
            continue
        if isinstance(new, int):
            changes[name] = Change(name, "static", value=str(new))
        elif new is None:
            continue
        elif getattr(new, "__name__", None) != name:
            changes[name] = Change(name, "substitute", value=new.__name__)
        elif (new.min, new.max) != (old.min, old.max):
            changes[name] = _bounds(name, old, new)
    return list(changes.values())


def _bounds(name: str, old: Any, new: Any) -> Change:
    """Suggestions only ever tighten; a bound the suggestion leaves out stays the user's."""
    lo = new.min if _finite(new.min) and new.min > old.min else None
    hi = new.max if _finite(new.max) and (not _finite(old.max) or new.max < old.max) else None
    return Change(name, "bounds", min=lo, max=hi)


def _finite(v: Any) -> bool:
    """A real bound: torch writes "no bound" as int_oo (a sympy number) or a huge int."""
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**62


def _pairs(old: Any, new: Any):
    """(old, new) leaves of two dynamic_shapes structures: Dim vs int / Dim / None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            yield from _pairs(old[k], new.get(k))
    elif isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        for a, b in zip(old, new):
            yield from _pairs(a, b)
    elif isinstance(old, Dim):
        yield old, new


def solved(findings: list[Finding], ctx: Context) -> list[Change]:
    """Where torch suggests nothing: the bounds that make the line's guard hold (sympy)."""
    out = []
    for dim, guard in ctx.cut.items():
        change = solve_bounds(dim, guard, ctx)
        if change is not None:
            out.append(change)
    return out


def solve_bounds(dim: str, guard: Any, ctx: Context) -> Change | None:
    """The widest interval of ``dim``, inside its declared range and around the example,
    where ``guard`` holds. ``seq - 2 != 1`` on ``Dim('seq', min=3)`` -> ``min=4``."""
    sym = next((s for s in guard.free_symbols if str(s) == dim), None)
    root = ctx.built.names.roots.get(dim)
    if sym is None or root is None or len(guard.free_symbols) != 1:
        return None
    sym_i = sympy.Symbol(dim, integer=True)
    guard = guard.xreplace({sym: sym_i})
    lo = int(root.min) if _finite(root.min) else 0
    hi = int(root.max) if _finite(root.max) else None
    example = ctx.spec.dims[dim].example if dim in ctx.spec.dims else None
    domain = sympy.Interval(lo, hi if hi is not None else sympy.oo)
    if isinstance(guard, sympy.Ne):  # excludes single points: keep the side of the example
        try:  # sympy cannot solve everything torch writes (round(), floor division, ...)
            points = sympy.solve(sympy.Eq(guard.lhs, guard.rhs), sym_i)
        except (NotImplementedError, ValueError, TypeError):
            return None
        point = points[0] if len(points) == 1 else None
        if point is None or not point.is_integer:
            return None
        point = int(point)
        if example is not None and example < point:
            return Change(dim, "bounds", max=point - 1)
        return Change(dim, "bounds", min=point + 1)
    try:
        allowed = sympy.solveset(guard, sym_i, domain)
    except Exception:
        return None
    pieces = list(allowed.args) if isinstance(allowed, sympy.Union) else [allowed]
    for piece in pieces:
        if isinstance(piece, sympy.Interval) and (example is None or example in piece):
            new_lo = int(sympy.ceiling(piece.start + (1 if piece.left_open else 0) * 0)) if piece.start.is_finite else None
            new_hi = int(sympy.floor(piece.end)) if piece.end.is_finite else None
            if new_lo is not None and piece.left_open and new_lo == piece.start:
                new_lo += 1
            if new_hi is not None and piece.right_open and new_hi == piece.end:
                new_hi -= 1
            return Change(dim, "bounds", min=new_lo if new_lo != lo else None, max=new_hi if new_hi != hi else None)
    return None


# -- check, then write ------------------------------------------------------------


def _verify(changes: list[Change], ctx: Context, exc: BaseException, try_export: TryExport) -> list[Change]:
    """Keep the changes with which the export gets past the dims it failed on."""
    if not changes:
        return []
    shapes = _apply(ctx.built.dynamic_shapes, changes)
    after = try_export(shapes)
    still = _failed_dims(after)
    kept = [c for c in changes if c.dim not in still]
    if len(kept) < len(changes) and kept:
        return _verify(kept, ctx, exc, try_export)
    return kept


def _failed_dims(exc: Exception | None) -> set[str]:
    if not (isinstance(exc, UserError) and exc.error_type == UserErrorType.CONSTRAINT_VIOLATION):
        return set()
    import re

    return {m.group(1) for item in violations(exc.msg) for m in re.finditer(r"\b(\w+) = L\[", item)} | set(
        re.findall(r"You marked (\w+) as dynamic", exc.msg)
    )


def _apply(shapes: Any, changes: list[Change]) -> Any:
    by_dim = {c.dim: c for c in changes}
    roots: dict[str, Any] = {}

    def new_root(d: Any) -> Any:
        c = by_dim.get(d.__name__)
        if c is None:
            return d
        if c.kind == "bounds":
            lo = c.min if c.min is not None else d.min
            hi = c.max if c.max is not None else d.max
            return roots.setdefault(d.__name__, Dim(d.__name__, min=lo, max=hi if _finite(hi) else None))
        return None  # static / substitute: handled at the leaf

    def leaf(d: Any) -> Any:
        if not isinstance(d, Dim):
            return d
        root = getattr(d, "root", None)
        c = by_dim.get((root or d).__name__)
        if c is None:
            return d
        if c.kind == "static":
            value = int(c.value)
            return d.fn(value) if root is not None else value
        if c.kind == "substitute":
            target = _expression_dim(c.value, shapes)
            return target if root is None else d.fn(target)
        r = new_root(root or d)
        return d.fn(r) if root is not None else r

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(walk(x) for x in v)
        return leaf(v)

    return walk(shapes)


def _expression_dim(text: str, shapes: Any) -> Any:
    """``a`` or ``dx + 1`` as a torch Dim, using the Dim objects already in ``shapes``."""
    found: dict[str, Any] = {}

    def collect(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                collect(x)
        elif isinstance(v, Dim) and not hasattr(v, "root"):
            found.setdefault(v.__name__, v)

    collect(shapes)
    expr = sympy.sympify(text)
    (sym,) = expr.free_symbols
    poly = sympy.Poly(expr, sym)
    a, b = (int(c) for c in poly.all_coeffs())
    root = found.get(str(sym)) or Dim(str(sym))
    return root * a + b if a != 1 else (root + b if b else root)


def _as_fix(c: Change, ctx: Context, preferred: bool) -> Fix | None:
    spec = ctx.spec
    if spec.source == "pyproject":
        path = spec.location.path
        old = ctx.read(path)
        try:
            if c.kind == "bounds":
                new = set_dim_bounds(old, spec.target, c.dim, **{k: v for k, v in (("min", c.min), ("max", c.max)) if v is not None})
            else:
                new = substitute_dim(old, spec.target, c.dim, c.value)
        except Exception:
            return None
    elif c.kind == "bounds":
        path = spec.path
        old = ctx.read(path)
        new = set_dim_call(old, c.dim, **{k: v for k, v in (("min", c.min), ("max", c.max)) if v is not None})
    else:
        return None
    edit = edit_between(path, old, new) if new else None
    return Fix(c.title, (edit,), preferred=preferred) if edit else None
