"""Where a guard over one dim holds, said as the user would write it (``seq <= 15``,
``seq % 8 == 0``): solved with sympy where it can, else by trying each size of the
declared range (floor division, modulo). sympy only: no torch here."""

from __future__ import annotations

from typing import Any, TypeGuard

import sympy


def finite(v: Any) -> TypeGuard[int]:
    """A real bound: torch writes "no bound" as int_oo (a sympy number) or a huge int."""
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**62


def bounds_declared(dim: Any) -> int:
    """How many of its bounds a root Dim was given (torch's default min is 0, its max none)."""
    lo, hi = getattr(dim, "min", None), getattr(dim, "max", None)
    return int(finite(lo) and lo > 0) + int(finite(hi))


def isolated(guard: Any, dim: str) -> str:
    """A linear inequality of one dim, said with the dim alone on the left (``seq <= 15``); "" otherwise."""
    if not isinstance(guard, (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan, sympy.GreaterThan)):
        return ""
    if {str(s) for s in guard.free_symbols} != {dim}:
        return ""
    (sym,) = guard.free_symbols
    try:
        a, b = sympy.Poly(guard.lhs - guard.rhs, sym).all_coeffs()
    except (sympy.PolynomialError, ValueError):
        return ""
    if a == 0:
        return ""
    op = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.StrictGreaterThan: ">", sympy.GreaterThan: ">="}[
        type(guard)
    ]
    if a < 0:
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
    bound = -b / a
    return f"{dim} {op} {bound}"


SCAN_LIMIT = 4096  # sizes tried one by one where sympy cannot solve a guard (floor division, modulo)


def scanned_interval(guard: Any, lo: int, hi: int | None, around: int | None) -> tuple[int, int] | None:
    """Where sympy gives up (``seq // 8 != 1``): the run of sizes in ``[lo, hi]`` where the
    guard over one symbol holds that holds ``around`` (the first such run without it), by
    trying each size; None for a range too large to try, or a guard that holds nowhere."""
    if hi is None or hi - lo > SCAN_LIMIT or len(guard.free_symbols) != 1:
        return None
    (sym,) = guard.free_symbols
    try:
        holds = [bool(guard.subs(sym, v)) for v in range(lo, hi + 1)]
    except TypeError:
        return None
    runs, start = [], None
    for v, ok in zip(range(lo, hi + 2), holds + [False]):
        if ok and start is None:
            start = v
        elif not ok and start is not None:
            runs.append((start, v - 1))
            start = None
    for a, b in runs:
        if around is None or a <= around <= b:
            return a, b
    return None


def scanned(guard: Any, dim: str, root: Any) -> str:
    """The sizes of the dim's declared range where the guard holds, said as bounds (``seq >= 16``)
    or, where they recur with a period, as a modulus (``seq % 8 == 0``)."""
    lo, hi = getattr(root, "min", None), getattr(root, "max", None)
    if not root or {str(x) for x in guard.free_symbols} != {dim}:
        return ""
    start, end = int(lo) if finite(lo) else 0, int(hi) if finite(hi) else None
    if end is not None and (step := period(guard, start, end)):
        return f"{dim} % {step[0]} == {step[1]}"
    found = scanned_interval(guard, start, end, None)
    if found is None or (end is not None and found[1] < end and scanned_interval(guard, found[1] + 1, end, None)):
        return ""  # no run of sizes, or more than one (``seq % 16 != 0``): no bounds say the guard
    a, b = found
    if b == hi:
        return f"{dim} >= {a}"
    return f"{dim} <= {b}" if a == (lo if finite(lo) else 0) else f"{a} <= {dim} <= {b}"


def period(guard: Any, lo: int, hi: int) -> tuple[int, int] | None:
    """``(k, r)`` where the guard holds at exactly the sizes ``v % k == r`` of ``[lo, hi]``
    (a reshape's divisibility); None for any other pattern, or a range too large to try."""
    found = recurring(guard, lo, hi)
    return (found[0], found[1]) if found is not None and found[2] < lo + found[0] else None


def recurring(guard: Any, lo: int, hi: int) -> tuple[int, int, int] | None:
    """``(k, r, first)`` where the guard holds at exactly the sizes ``first, first + k, ...``
    of ``[lo, hi]`` (``r = first % k``): a divisibility that some small sizes break too
    (``(n - 2) % 2 == 0`` and ``(n - 2) // 2 != 1``: 6, 8, 10, ...)."""
    if hi - lo > SCAN_LIMIT or len(guard.free_symbols) != 1:
        return None
    (sym,) = guard.free_symbols
    try:
        holds = [v for v in range(lo, hi + 1) if bool(guard.subs(sym, v))]
    except TypeError:
        return None
    if len(holds) < 2 or holds[1] - holds[0] < 2:
        return None
    k = holds[1] - holds[0]
    return (k, holds[0] % k, holds[0]) if holds == list(range(holds[0], hi + 1, k)) else None
