"""Fixes as text edits (torch side): for constraint violations, edits of the spec checked by
exporting again; for data-dependent branches, a ``torch._check`` line.

Each violation arrives carrying torch's suggested changes for its dims (read
in ``violations``). Where torch suggests nothing for a dim, the guard that cut
its declared range is solved for the dim with sympy. A change stays with its
violation only when exporting with all the changes no longer fails on its dim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any

import sympy
from torch.export import Dim

from ...core.report import DimSize, Fix, Narrowing, Probe
from ...edit.at_line import branch_conditions
from ...edit.int_sizes import divided_ints
from ...edit.jaxtyping_edits import annotation_edits
from ...edit.python_edits import insert_torch_check, replace_size_literal, set_dim_call, substitute_dim_call
from ...edit.spec_tables import set_dim_bounds, substitute_dim
from ...edit.text_edits import edit_between
from ...spec.loading import SpecSource
from ..compat.internals import is_dim
from ..context import Context
from ..naming.guard_ranges import finite
from ..reading.failures import DataDependent, Record
from ..reading.violations import Change, ChangeKind, Constraint, Specialization, Violation, ViolationKind, failed_dims
from .example_sizes import example_size_fix
from .slice_fixes import slice_write_fix
from .solved_bounds import solve_bounds

TryExport = Callable[[Any], Exception | None]  # export again with other dynamic_shapes: what it raised, or None


def verified(records: tuple[Record, ...], ctx: Context, try_export: TryExport) -> tuple[Record, ...]:
    """The records, each violation keeping only the changes that work (a sympy-solved bound added
    where torch suggests nothing for its dim); any other record as it is. One change per dim:
    a change that solves several violations is carried by each."""
    records = _with_solved(records, ctx)
    unique: dict[str, Change] = {}
    for record in records:
        for change in fixes_of(record):
            unique.setdefault(change.dim, change)
    changes = list(unique.values())
    none: list[Change] = []  # kept where the proof fails
    kept = set(ctx.fix_or("proof by export", lambda: _verify(_buildable(changes, ctx), ctx, try_export), none))
    return tuple(
        replace(r, fixes=tuple(c for c in r.fixes if c in kept)) if isinstance(r, Constraint) and r.fixes else r
        for r in records
    )


def fixes_of(record: Record) -> tuple[Change, ...]:
    """The changes of the spec a record carries (a constraint's; none for any other)."""
    return record.fixes if isinstance(record, (Violation, Specialization)) else ()


def _with_solved(records: tuple[Record, ...], ctx: Context) -> tuple[Record, ...]:
    """Where torch suggests nothing for a dim whose range a recorded guard cuts: the bounds that
    make the guard hold, carried by every violation that blames the dim."""
    suggested = {c.dim for r in records for c in fixes_of(r)}
    cuts = {
        r.dims[0]: r
        for r in records
        if isinstance(r, Violation) and r.kind is ViolationKind.RANGE and r.guard is not None
    }
    solved = {}
    for dim, cut in cuts.items():  # a dim cut twice: its last guard, as torch lists them
        if dim in suggested:
            continue
        change = ctx.fix_or(f"bounds of {dim}", partial(solve_bounds, dim, cut.guard, ctx, cut.also), None)
        if change is not None:
            solved[dim] = change
    if not solved:
        return records
    return tuple(
        replace(r, fixes=r.fixes + tuple(c for d, c in solved.items() if d in r.fixable))
        if isinstance(r, (Violation, Specialization))
        else r
        for r in records
    )


# -- check by exporting again ------------------------------------------------------------


def _buildable(changes: list[Change], ctx: Context) -> list[Change]:
    """The changes torch makes Dims of (it refuses ``Dim('side', min=32, max=32)``)."""

    def builds(change: Change) -> bool:
        _apply(ctx.built.dynamic_shapes, [change])
        return True

    return [c for c in changes if ctx.fix_or(str(c), partial(builds, c), False)]


def _verify(changes: list[Change], ctx: Context, try_export: TryExport) -> list[Change]:
    """The changes with which the export gets past the dims it failed on: export with all of
    them, drop those whose dim still fails, and again until what is left holds."""
    if not changes:
        return []
    still = failed_dims(try_export(_apply(ctx.built.dynamic_shapes, changes)))
    kept = [c for c in changes if c.dim not in still]
    if len(kept) < len(changes) and kept:
        return _verify(kept, ctx, try_export)
    return kept


def _apply(shapes: Any, changes: list[Change]) -> Any:
    """``shapes`` (the user's dynamic_shapes) with ``changes`` made; derived dims follow their root."""
    by_dim = {c.dim: c for c in changes}
    roots: dict[str, Any] = {}  # one new Dim per changed root, shared by every use

    def leaf(d: Any) -> Any:
        root = getattr(d, "root", None)
        change = by_dim.get((root or d).__name__) if is_dim(d) else None
        if change is None:
            return d
        new = _changed_root(change, root or d, shapes, roots)
        return d.fn(new) if root is not None else new

    return _map_leaves(shapes, leaf)


def _changed_root(change: Change, d: Any, shapes: Any, roots: dict[str, Any]) -> Any:
    """What root Dim ``d`` becomes: a size, another dim (or an expression of one), or a Dim with new bounds."""
    if change.kind is ChangeKind.STATIC:
        return int(change.value)
    if change.kind is ChangeKind.SUBSTITUTE:
        return _expression_dim(change.value, shapes, d, change.min)
    lo = change.min if change.min is not None else d.min
    hi = change.max if change.max is not None else d.max
    return roots.setdefault(d.__name__, Dim(d.__name__, min=lo, max=hi if finite(hi) else None))


def _map_leaves(v: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(v, dict):
        return {k: _map_leaves(x, fn) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_map_leaves(x, fn) for x in v)
    return fn(v)


def _leaves(v: Any) -> Iterator[Any]:
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def _expression_dim(text: str, shapes: Any, old: Any = None, least: int | None = None) -> Any:
    """``a`` or ``dx + 1`` as a torch Dim, using the root Dim objects already in ``shapes``; a
    new root (``_n`` of ``n = 2*_n``) gets the range of ``old`` in its own terms, as the spec
    edit writes it, and ``least`` for its min where given."""
    found: dict[str, Any] = {}
    for v in _leaves(shapes):
        if is_dim(v) and not hasattr(v, "root"):
            found.setdefault(v.__name__, v)
    expr = sympy.sympify(text)
    (sym,) = expr.free_symbols
    a, b = (int(c) for c in sympy.Poly(expr, sym).all_coeffs())
    root = found.get(str(sym)) or _new_root(str(sym), a, b, old, least)
    return root * a + b if a != 1 else (root + b if b else root)


def _new_root(name: str, a: int, b: int, old: Any, least: int | None) -> Any:
    lo = least if least is not None else -((b - old.min) // a) if old is not None and finite(old.min) else None
    hi = (old.max - b) // a if old is not None and finite(old.max) else None
    return Dim(name, min=lo, max=hi)


# -- as edits --------------------------------------------------------------------------


def size_in_code(record: Constraint, ctx: Context) -> Fix | None:
    """Where the line that constrains a dim writes a size as a number (``view(4, -1)``,
    which pins ``batch`` to 4, or needs ``batch % 4 == 0``), the input's own size in its
    place: ``view(x.shape[0], -1)``. Only on a line of ``forward`` itself, whose
    parameters are in scope there; the proof of the fix tells whether it was right."""
    frame = record.frame
    if isinstance(record, Specialization):
        dim, value = record.dim, record.value
    elif (m := re.search(r"%\s*(\d+)", record.requirement)) and record.dims:
        dim, value = record.dims[0], int(m[1])
    else:
        return None
    if frame is None or frame.name != "forward":
        return None
    axes = [
        (param, axis)
        for param, named in ctx.built.names.by_input.items()
        for axis, name in named.items()
        if name == dim
    ]
    axes = [(p, a) for p, a in axes if p.isidentifier() and p in ctx.built.params]
    if not axes:
        return None
    param, axis = axes[0]
    path = ctx.sources.rel(frame.filename)
    old = ctx.read(path)
    size = f"{param}.shape[{axis}]"
    new = replace_size_literal(old, frame.line, value, size)
    edit = edit_between(path, old, new) if new else None
    if edit is None:
        return None
    # compared with the module as written where it runs: a number that is the model's (16 slots) then differs
    at = (DimSize(dim, value),) if isinstance(record, Specialization) else ()
    probe = Probe(f"example inputs at {dim} = {value}" if at else "example inputs", sizes=at)
    return Fix(f"Write `{size}` for the `{value}` this line hard-codes", (edit,), preferred=True, probes=(probe,))


def narrowing_less(record: Constraint, ctx: Context) -> Fix | None:
    """A fix that keeps what the spec's own edits would narrow, tried first where there is one:
    ``int(h / k)`` written ``h // k``, ``out[:n] = x`` as ``slice_scatter``, or another example size."""
    return _floor_division(record, ctx) or example_size_fix(record, ctx) or slice_write_fix(record, ctx)


def _floor_division(record: Constraint, ctx: Context) -> Fix | None:
    """``int(h / self.factor)`` pins ``h`` to sizes around the example's (``int(h / 2) == 16``):
    ``h // self.factor`` is the same size for every ``h`` and stays symbolic. Compared with
    eager on the probes, like any rewrite (probes.py)."""
    guard = getattr(record, "guard", None)
    cast = guard is not None and any(type(a).__name__ in _TO_INT for a in sympy.preorder_traversal(guard))
    frame = record.frame
    if frame is None or not (cast or getattr(record, "by_guards", False)):
        return None
    path = ctx.sources.rel(frame.filename)
    text = ctx.read(path)
    divided = divided_ints(text, frame.line)
    edit = edit_between(path, text, divided.text) if divided else None
    if edit is None or divided is None:
        return None
    title = f"Write `{divided.rewritten}` for `{divided.written}`: the same sizes in integer arithmetic, kept symbolic"
    return Fix(title, (edit,), preferred=True, probes=(Probe("example inputs"),), rank=Narrowing.REWRITE)


_TO_INT = frozenset({"TruncToInt", "FloorToInt"})  # ``int()`` and ``math.floor`` of a float, as torch's sympy says them


def spec_fixes(changes: tuple[Change, ...], ctx: Context) -> tuple[Fix, ...]:
    """Each change as an edit of the spec (the pyproject table, or the ``Dim(...)`` calls in
    code); the least narrowing (``Narrowing``; of equals, the first) is the preferred fix."""
    fixes = [f for f in (_as_fix(c, ctx, False) for c in changes) if f is not None]
    best = min(range(len(fixes)), key=lambda i: fixes[i].rank.order, default=None)
    return tuple(replace(f, preferred=i == best) for i, f in enumerate(fixes))


def _as_fix(c: Change, ctx: Context, preferred: bool) -> Fix | None:
    return _spec_edit((c,), ctx, c.title, preferred)


def narrowing(changes: tuple[Change, ...]) -> Narrowing:
    """How much a spec edit making ``changes`` narrows: its most narrowing change's."""
    return max((_NARROWS[c.kind] for c in changes), key=lambda n: n.order, default=Narrowing.RANGE)


_NARROWS = {
    ChangeKind.BOUNDS: Narrowing.RANGE,
    ChangeKind.SUBSTITUTE: Narrowing.RELATION,
    ChangeKind.STATIC: Narrowing.STATIC,
}


def spec_fix(c: Change, ctx: Context, preferred: bool) -> Fix | None:
    """One change as an edit of the spec, titled by the change (a lowering's narrower range)."""
    return _as_fix(c, ctx, preferred)


def _spec_edit(changes: tuple[Change, ...], ctx: Context, title: str, preferred: bool = False) -> Fix | None:
    """One edit of the spec that makes every change (in code, the ``Dim(...)`` calls)."""
    spec = ctx.spec
    if spec.source is SpecSource.ANNOTATIONS:  # the annotations, and a range in pyproject.toml
        plain = [
            (c.dim, {k: v for k, v in (("min", c.min), ("max", c.max)) if v is not None}, c.value) for c in changes
        ]
        edits = annotation_edits(spec, plain, ctx.sources)
        return Fix(title, edits, preferred=preferred, rank=narrowing(changes)) if edits else None
    in_toml = spec.source is SpecSource.PYPROJECT
    path = spec.location.path if in_toml else spec.path
    old = new = ctx.read(path)
    for c in changes:
        edited = ctx.fix_or(f"spec edit: {c}", partial(_edited, new, c, spec.target, in_toml), None)
        if not edited:
            return None
        new = edited
    edit = edit_between(path, old, new)
    return Fix(title, (edit,), preferred=preferred, rank=narrowing(changes)) if edit else None


def _edited(text: str, c: Change, target: str, in_toml: bool) -> str | None:
    """``text`` (pyproject.toml, or the code's ``Dim(...)`` calls) with change ``c`` made; None where it cannot be."""
    bounds = {k: v for k, v in (("min", c.min), ("max", c.max)) if v is not None}
    if not in_toml and c.kind is ChangeKind.BOUNDS:
        return set_dim_call(text, c.dim, **bounds)
    if not in_toml:
        return substitute_dim_call(text, c.dim, c.value)
    if c.kind is ChangeKind.BOUNDS:
        return set_dim_bounds(text, target, c.dim, **bounds)
    new = substitute_dim(text, target, c.dim, c.value)
    if bounds and new and c.root:  # the new dim's own bounds: ``n = 2*_n`` with ``_n >= 3``
        new = set_dim_bounds(new, target, c.root, **bounds)
    return new


def fix_all(records: tuple[Record, ...], ctx: Context) -> Fix | None:
    """Where several findings each carry a fix of the spec: one fix that makes all their
    changes in one edit."""
    fixed = [r for r in records if fixes_of(r)]
    changes = tuple({c.dim: c for r in fixed for c in reversed(fixes_of(r))}.values())
    if len(fixed) < 2 or len(changes) < 2:
        return None  # (torch repeats one violation once per guard: one change is no "all")
    # what it reaches is the owner's to say, once it exported it (workers/proofs.py)
    return _spec_edit(changes, ctx, f"Apply all suggested fixes for {ctx.module.name}")


def torch_check_candidates(record: DataDependent, ctx: Context) -> tuple[str, ...]:
    """The two conditions a ``torch._check`` before the record's line may assume: the
    branch as the user wrote it and its negation where it is one plain comparison
    (``conf > self.threshold``), else torch's condition and its negation in the user's
    names (``count > 3``); either may be missing where a symbol has no name in code."""
    if record.frame is None:
        return ()
    written = branch_conditions(ctx.read(ctx.sources.rel(record.frame.filename)), record.frame.line)
    if written is not None:
        return written
    out = []
    for expr in (record.condition, sympy.Not(record.condition)):
        code = record.names.write(sympy.simplify_logic(expr) if isinstance(expr, sympy.Not) else expr)
        if code is not None:
            out.append(code)
    return tuple(out)


def torch_check_fixes(record: DataDependent, ctx: Context) -> tuple[Fix, ...]:
    """A ``torch._check`` of each candidate condition, inserted before the user's line. The
    one the example inputs satisfy (``record.example``, found by running forward on them)
    comes first and is preferred; the other says that they do not. Where the example's
    way is unknown, neither is preferred."""
    if record.frame is None:
        return ()
    path = ctx.sources.rel(record.frame.filename)
    candidates = torch_check_candidates(record, ctx)
    held = dict(zip(candidates, record.example))
    order = sorted(candidates, key=lambda code: held.get(code) is not True)
    fixes = []
    for code in order:
        old = ctx.read(path)
        new = insert_torch_check(old, record.frame.line, code)
        edit = edit_between(path, old, new) if new else None
        if edit is None:
            continue
        title = f"{ASSUMES}`{code}` here{_plainly(code)}: insert torch._check({code})"
        if held.get(code) is False:
            title += " (the example inputs do not)"
        fixes.append(Fix(title, (edit,), preferred=held.get(code) is True, rank=Narrowing.ASSUMPTION))
    return tuple(fixes)


ASSUMES = "Assume "  # an assumption's title begins so (its kind is its rank: ``Narrowing.ASSUMPTION``)
_EMPTINESS = re.compile(r"^(?:len\((\w+)\)|(\w+)\.(?:shape\[0\]|size\(0\)|numel\(\)))\s*(==|!=|>|>=)\s*([01])$")


def _plainly(code: str) -> str:
    """What a size test assumes, in words: ``keep.shape[0] != 0`` is "`keep` is never empty"."""
    m = _EMPTINESS.match(code)
    if m is None:
        return ""
    name, op, bound = m[1] or m[2], m[3], int(m[4])
    empty = {("==", 0): True, ("!=", 0): False, (">", 0): False, (">=", 1): False}.get((op, bound))
    if empty is None:
        return ""
    return f" (`{name}` is always empty)" if empty else f" (`{name}` is never empty)"
