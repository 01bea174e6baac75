"""A relation of several dims judged over the declared box (sympy only, no torch).

torch words a cache's limit in ways that hide the one relation the user must keep: a range
guard `seq + start_pos >= 0 and seq + start_pos <= 64` whose first half every declared size
meets, or a program that refuses only `64*seq + 64*start_pos == 4096`, the box's top edge
(a slice's end at the cache's length). Each is the bound `seq + start_pos <= 63` (or `<= 64`),
and such a sum keeps every dim dynamic when their maxima are cut together so that it fits.
"""

from __future__ import annotations

from itertools import product
from math import gcd
from typing import Any

import sympy

from ..naming.guard_ranges import finite

Box = dict[str, tuple[int, int]]  # dim name -> its declared (min, max)


def box_of(roots: dict[str, Any], names: set[str]) -> Box | None:
    """The declared ranges of ``names`` (torch Dims by name); None where one is unbounded."""
    out = {}
    for name in names:
        root = roots.get(name)
        lo, hi = getattr(root, "min", None), getattr(root, "max", None)
        if root is None or not finite(hi):
            return None
        out[name] = (int(lo) if finite(lo) else 0, int(hi))
    return out


def binding(guard: Any, roots: dict[str, Any]) -> Any:
    """The one part of ``guard`` (a conjunction over dim names) that some declared size breaks:
    the guard itself where it is not a conjunction, or where that part is not one."""
    if not isinstance(guard, sympy.And):
        return guard
    kept = [part for part in guard.args if not _always_in_box(part, roots)]
    return kept[0] if len(kept) == 1 else guard


def _always_in_box(relation: Any, roots: dict[str, Any]) -> bool:
    """Whether a linear ``relation`` holds at every corner of the box, so everywhere in it."""
    linear = _linear(relation.lhs - relation.rhs) if isinstance(relation, sympy.Rel) else None
    box = box_of(roots, {s.name for s in relation.free_symbols}) if linear else None
    if box is None or len(box) > 6:
        return False
    symbols = {s.name: s for s in relation.free_symbols}
    return all(
        bool(relation.xreplace({symbols[n]: sympy.Integer(v) for n, v in zip(box, corner)}))
        for corner in product(*box.values())
    )


def edge_bound(refused: Any, roots: dict[str, Any]) -> Any:
    """The bound a program keeps where it refuses a sum only at the box's edge: `Eq(64*seq +
    64*start_pos, 4096)` with 4096 the sum's largest declared value is `seq + start_pos <= 63`
    (or `>=` at its smallest); None where ``refused`` is not such an equality."""
    if not isinstance(refused, sympy.Eq):
        return None
    expr = sympy.expand(refused.lhs - refused.rhs)
    weights = _linear(expr)
    box = box_of(roots, set(weights or ())) if weights else None
    if not weights or box is None or len(weights) < 2:
        return None
    number = expr.subs({s: 0 for s in expr.free_symbols})
    if not number.is_Integer:
        return None
    constant = int(number)
    if all(w < 0 for w in weights.values()):  # the same sum, said with positive weights
        weights, constant = {n: -w for n, w in weights.items()}, -constant
    if any(w <= 0 for w in weights.values()):
        return None
    g = gcd(*weights.values())
    total = sum(sympy.Integer(w // g) * sympy.Symbol(n) for n, w in weights.items())
    top = sum(w * box[n][1] for n, w in weights.items()) + constant
    bottom = sum(w * box[n][0] for n, w in weights.items()) + constant
    if top == 0:
        return sympy.Le(total, (-constant - 1) // g)
    if bottom == 0:
        return sympy.Ge(total, -((constant - 1) // g))
    return None


def _linear(expr: Any) -> dict[str, int] | None:
    """Each symbol's integer weight in ``expr``, a sum of weighted dims and a number; else None."""
    symbols = list(expr.free_symbols)
    if not symbols or not expr.is_polynomial(*symbols) or sympy.Poly(expr, *symbols).total_degree() != 1:
        return None
    weights = {s.name: expr.coeff(s) for s in sorted(symbols, key=lambda s: s.name)}  # (in one order every run)
    if not all(w.is_Integer and w != 0 for w in weights.values()):
        return None
    return {n: int(w) for n, w in weights.items()}


def sum_cut(guard: Any, roots: dict[str, Any]) -> dict[str, int] | None:
    """Each dim's new maximum where ``guard`` is a sum of dims with positive weights that must
    stay under a number: the maxima cut in proportion, what rounding down leaves given back to
    the dims it took most from, so that the sum fits as closely as it can. None where it is not
    such a sum, or where no cut keeps each minimum."""
    if not isinstance(guard, (sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt)):
        return None
    expr = sympy.expand(guard.lhs - guard.rhs if isinstance(guard, (sympy.Le, sympy.Lt)) else guard.rhs - guard.lhs)
    expr += 1 if isinstance(guard, (sympy.Lt, sympy.Gt)) else 0  # expr <= 0
    weights = _linear(expr)
    box = box_of(roots, set(weights or ())) if weights else None
    if not weights or box is None or any(w <= 0 for w in weights.values()):
        return None
    number = expr.subs({s: 0 for s in expr.free_symbols})
    if not number.is_Integer:
        return None
    cap = -int(number)
    scale = sympy.Rational(cap, sum(w * box[n][1] for n, w in weights.items()))
    exact = {n: box[n][1] * scale for n in weights}
    cut = {n: int(sympy.floor(v)) for n, v in exact.items()}
    for n in sorted(cut, key=lambda n: exact[n] - cut[n], reverse=True):
        if sum(w * cut[d] for d, w in weights.items()) + weights[n] <= cap and cut[n] < box[n][1]:
            cut[n] += 1
    if any(cut[n] < box[n][0] for n in cut) or sum(w * cut[n] for n, w in weights.items()) > cap:
        return None
    return cut
