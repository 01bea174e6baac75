"""A dim's declared range cut to where a guard over it holds (sympy; torch side): what
``fixes`` offers where torch suggests no change for a dim."""

from __future__ import annotations

from typing import Any

import sympy

from ..context import Context
from ..naming.guard_ranges import SCAN_LIMIT, finite, period, recurring, scanned_interval
from ..reading.violations import Change, ChangeKind


def solve_bounds(dim: str, guard: Any, ctx: Context, also: tuple[Any, ...] = ()) -> Change | None:
    """The widest interval of ``dim``, inside its declared range and around the example, where
    ``guard`` (over the dim's name) holds. ``seq - 2 != 1`` on ``Dim('seq', min=3)`` -> ``min=4``.
    Where it holds with a period, the dim as a multiple of a new one (``side = 2*_side``),
    whose min keeps ``also`` (the dim's other guards) too."""
    sym = next((s for s in guard.free_symbols if str(s) == dim), None)
    root = ctx.built.names.roots.get(dim)
    if sym is None or root is None or len(guard.free_symbols) != 1:
        return None
    sym_i = sympy.Symbol(dim, integer=True)
    guard = guard.xreplace({sym: sym_i})
    example = ctx.spec.dims[dim].example if dim in ctx.spec.dims else ctx.built.traced_size(dim)
    lo = int(root.min) if finite(root.min) else 0
    hi = int(root.max) if finite(root.max) else None
    solved = (
        _beside_point(dim, guard, sym_i, example)
        if isinstance(guard, sympy.Ne)
        else _around_example(dim, guard, sym_i, lo, hi, example)
    )
    if solved is not None and solved != Change(dim, ChangeKind.BOUNDS):  # (not the whole range again)
        return solved
    if (cut := _where_provable(dim, guard, sym_i, lo, hi, example)) is not None:
        return cut
    if (multiple := _as_multiple(dim, guard, sympy.And(guard, *_over(also, sym, sym_i)), lo, hi)) is not None:
        return multiple
    found = scanned_interval(guard, lo, hi, example)
    if found is None or found == (lo, hi):
        return None
    if found[0] == found[1]:  # one size: torch refuses a Dim whose min is its max
        return Change(dim, ChangeKind.STATIC, value=str(found[0]))
    return Change(
        dim, ChangeKind.BOUNDS, min=found[0] if found[0] != lo else None, max=found[1] if found[1] != hi else None
    )


def _where_provable(dim: str, guard: Any, sym: Any, lo: int, hi: int | None, example: int | None) -> Change | None:
    """A guard every declared size satisfies but torch 2.13's value ranges cannot prove
    (``min(8, n) <= n``): the range cut where each ``min``/``max`` of the dim and a number
    takes one side, which torch then proves. The side holding the example; of two, the wider.
    (Matched by name: torch writes its own ``Min``/``Max``, not sympy's.)"""
    numbers = {
        int(a)
        for m in sympy.preorder_traversal(guard)
        if type(m).__name__ in ("Min", "Max") and len(m.args) == 2 and m.free_symbols == {sym}
        for a in m.args
        if a.is_Integer
    }
    top = hi if hi is not None else lo + SCAN_LIMIT
    sides = [
        side
        for c in sorted(numbers)
        if lo < c < top
        for side in ((Change(dim, ChangeKind.BOUNDS, min=c), c, top), (Change(dim, ChangeKind.BOUNDS, max=c), lo, c))
    ]
    held = [s for s in sides if example is None or s[1] <= example <= s[2]]
    widest = max(held, key=lambda s: s[2] - s[1], default=None)
    return widest[0] if widest else None


def _as_multiple(dim: str, guard: Any, with_also: Any, lo: int, hi: int | None) -> Change | None:
    """``2*trunc(0.5*side) == side``: sizes that recur (tried up to SCAN_LIMIT above the min),
    the dim as a multiple of a new one."""
    top = hi if hi is not None else lo + SCAN_LIMIT
    if period(guard, lo, top) is None or not (step := recurring(with_also, lo, top)):
        return None
    k, r, first = step
    least = -((r - lo) // k)  # the new dim's min that the old min implies (the spec edit carries it)
    start = (first - r) // k
    value = f"{k}*_{dim}" + (f" + {r}" if r else "")
    return Change(dim, ChangeKind.SUBSTITUTE, value=value, min=start if start > least else None)


def _over(guards: tuple[Any, ...], sym: Any, sym_i: Any) -> list[Any]:
    """``guards`` over the integer symbol ``solve_bounds`` uses; those over other dims left out."""
    return [
        g.xreplace({s: sym_i for s in g.free_symbols if str(s) == str(sym)})
        for g in guards
        if {str(s) for s in g.free_symbols} == {str(sym)}
    ]


def _beside_point(dim: str, guard: Any, sym: sympy.Symbol, example: int | None) -> Change | None:
    """``guard`` excludes one point: keep the side of it where the example is (above, without one)."""
    try:  # sympy cannot solve everything torch writes (round(), floor division, ...)
        points = sympy.solve(sympy.Eq(guard.lhs, guard.rhs), sym)
    except (NotImplementedError, ValueError, TypeError):
        return None
    point = points[0] if len(points) == 1 else None
    if point is None or not point.is_integer:
        return None
    point = int(point)
    if example is not None and example < point:
        return Change(dim, ChangeKind.BOUNDS, max=point - 1)
    return Change(dim, ChangeKind.BOUNDS, min=point + 1)


def _around_example(
    dim: str, guard: Any, sym: sympy.Symbol, lo: int, hi: int | None, example: int | None
) -> Change | None:
    """The piece of ``[lo, hi]`` where ``guard`` holds that holds the example (the first, without one)."""
    try:
        allowed = sympy.solveset(guard, sym, sympy.Interval(lo, hi if hi is not None else sympy.oo))
    except Exception:
        return None
    pieces = list(allowed.args) if isinstance(allowed, sympy.Union) else [allowed]
    for piece in pieces:
        if isinstance(piece, sympy.Interval) and (example is None or example in piece):
            new_lo = int(sympy.ceiling(piece.start)) if piece.start.is_finite else None
            new_hi = int(sympy.floor(piece.end)) if piece.end.is_finite else None
            if new_lo is not None and piece.left_open and new_lo == piece.start:
                new_lo += 1
            if new_hi is not None and piece.right_open and new_hi == piece.end:
                new_hi -= 1
            return Change(
                dim, ChangeKind.BOUNDS, min=new_lo if new_lo != lo else None, max=new_hi if new_hi != hi else None
            )
    return None
