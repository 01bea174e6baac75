"""Plain exceptions that are constraints on the declared dims in disguise (torch side).

While tracing, torch raises a broadcast or reshape mismatch between symbolic sizes as a
plain ``RuntimeError`` ("The size of tensor a (2*s53//2) must match the size of tensor b
(s17)"), not as a constraint violation: nothing says which dims it ties. Read here into
the same records ``violations`` makes of torch's own violations, by solving the sizes'
equation with sympy over the user's dims: one dim fixed to a size is a
``Specialization`` (``h`` must be 64), two dims tied are an equality or a relation
(``m = n``, ``m = 2*n``). A mismatch that says nothing about declared dims stays what
it was (``failures.Raised``).
"""

from __future__ import annotations

from typing import Any

import sympy

from ..compat import messages as forms
from ..locate import Frame
from ..naming.guard_ranges import bounds_declared
from ..naming.symbols import SYMBOL, SymbolNames
from .violations import Change, ChangeKind, Constraint, Specialization, Violation, ViolationKind


def sides(text: str) -> tuple[str, str] | None:
    """The two sizes a mismatch message says must be equal, in torch's symbols; None for
    any other message (and for a reshape with ``-1``: a divisibility, not an equality)."""
    if m := forms.BROADCAST.search(text):
        return m[1], m[2]
    if m := forms.RESHAPE.search(text):
        parts = [p.strip() for p in m[1].split(",")]
        return None if "-1" in parts else ("*".join(f"({p})" for p in parts), m[2])
    if m := forms.CAT.search(text):
        return m[1], m[2]
    if m := forms.MATMUL.search(text):
        return m[2], m[3]
    return None


def read_mismatch(
    text: str, names: SymbolNames, roots: dict[str, Any], frame: Frame | None, detail: str
) -> Constraint | None:
    """The constraint a mismatch message puts on the declared dims (``roots``: name -> Dim)."""
    found = sides(text)
    if found is None:
        return None
    dims = {name: sympy.Symbol(name, integer=True, positive=True) for name in roots}
    try:
        user = {str(sym): sympy.sympify(name, locals=dims) for sym, name in names.message.items()}
        lhs, rhs = (sympy.sympify(side.replace("//", " // "), locals=user) for side in found)
        equation = sympy.simplify(lhs - rhs)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        return None
    free = equation.free_symbols
    if equation == 0 or not free or not free <= set(dims.values()) or SYMBOL.search(str(equation)):
        return None  # not about the declared dims, or a symbol of torch's we cannot name
    return _specialized(equation, free, frame, detail) or _tied(equation, free, roots, frame, detail)


def _solutions(equation: Any, sym: sympy.Symbol) -> list[Any]:
    try:
        return [s for s in sympy.solve(equation, sym) if s != 0]
    except (NotImplementedError, ValueError, TypeError):
        return []


def _specialized(equation: Any, free: set[sympy.Symbol], frame: Frame | None, detail: str) -> Specialization | None:
    """One dim that the equation fixes to one size, whatever the others are."""
    for sym in sorted(free, key=str):
        solved = _solutions(equation, sym)
        if len(solved) == 1 and solved[0].is_Integer and solved[0] > 0:
            value = int(solved[0])
            return Specialization(
                str(sym), value, detail, frame, (Change(str(sym), ChangeKind.STATIC, value=str(value)),)
            )
    return None


def _tied(
    equation: Any, free: set[sympy.Symbol], roots: dict[str, Any], frame: Frame | None, detail: str
) -> Violation | None:
    """Two dims the equation ties: one becomes an expression of the other, which keeps the
    bounds declared for it (``dx >= 5`` stays, ``dy = dx - 1``): the one with fewer declared
    bounds, of two alike the one declared last."""
    if len(free) != 2:
        return None
    order = list(roots)
    for sym in sorted(free, key=lambda s: (bounds_declared(roots[str(s)]), -order.index(str(s)))):
        (other,) = free - {sym}
        solved = _solutions(equation, sym)
        if len(solved) != 1 or not _linear(solved[0], other):
            continue
        dim, expr = str(sym), solved[0]
        if expr == other:
            change = Change(dim, ChangeKind.SUBSTITUTE, value=str(other))
            return Violation(
                ViolationKind.EQUALITY, (str(other), dim), detail, f"{other} = {dim}", frame=frame, fixes=(change,)
            )
        change = Change(dim, ChangeKind.SUBSTITUTE, value=str(expr))
        return Violation(
            ViolationKind.RELATION, (dim, str(other)), detail, f"{dim} = {expr}", frame=frame, fixes=(change,)
        )
    return None


def _linear(expr: Any, sym: sympy.Symbol) -> bool:
    """``a*sym + b`` with whole ``a >= 1`` and ``b``: an expression a spec can declare."""
    try:
        a, b = sympy.Poly(expr, sym).all_coeffs()
    except (sympy.PolynomialError, ValueError):
        return False
    return a.is_Integer and b.is_Integer and a >= 1
