"""A relation of several dims said once: torch reports `new_len + past_len <= 256` once per
dim it names (each "not all values of new_len …"), and a finding per dim says the same
requirement twice on one line, each as if only its own dim were at fault. The violations of
one line that require the same relation are one record naming every dim; where the relation
is a sum that must fit, its first fix cuts the dims together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import sympy

from ..core.report import Finding, Fix, Narrowing
from .changes import Change, ChangeKind
from .context import Context
from .corners import names_in
from .fixes import spec_fixes
from .violations import Constraint, Violation, ViolationKind


def as_one(records: tuple) -> tuple:
    """``records`` with each line's range violations of one relation folded into the first."""
    kept: list = []
    first: dict[tuple, int] = {}
    for record in records:
        key = _relation(record)
        if key is None:
            kept.append(record)
        elif key in first:
            at = first[key]
            new = [d for d in record.dims if d not in (*kept[at].dims, *kept[at].together)]
            kept[at] = replace(kept[at], together=(*kept[at].together, *new))
        else:
            first[key] = len(kept)
            kept.append(record)
    return tuple(kept)


def _relation(record: object) -> tuple | None:
    """What makes two violations one: the line and the relation, where it names two dims or more."""
    if not isinstance(record, Violation) or record.kind is not ViolationKind.RANGE or record.always:
        return None
    if record.frame is None or len(set(names_in(record.requirement))) < 2:
        return None
    return (record.frame.filename, record.frame.line, record.requirement)


def named(record: Constraint) -> tuple[str, ...]:
    """The dims a finding concerns (a dim's hover in pyproject.toml finds it by them)."""
    return (*record.dims, *(record.together if isinstance(record, Violation) else ()))


def with_shared_cut(record: Constraint, finding: Finding, ctx: Context) -> Finding:
    """``finding`` naming every dim of its relation; where the relation is a sum that must fit
    (`new_len + past_len <= 256`), first the fix that keeps every dim dynamic with maxima whose
    sum fits, each cut in proportion to its declared maximum: one dim's cut alone cannot
    satisfy a relation of several (its proof then folds in round after round)."""
    finding = replace(finding, dims=named(record))
    maxima = _sum_cut(record, ctx) if isinstance(record, Violation) and record.together else None
    parts = spec_fixes(tuple(Change(d, ChangeKind.BOUNDS, max=m) for d, m in (maxima or {}).items()), ctx)
    if not maxima or len(parts) != len(maxima):
        return finding
    action = " and ".join(p.action[:1].lower() + p.action[1:] if i else p.action for i, p in enumerate(parts))
    edits = tuple(e for p in parts for e in p.edits)
    cut = Fix(action, edits, preferred=True, rank=Narrowing.RANGE)
    return replace(finding, fixes=(cut, *(replace(f, preferred=False) for f in finding.fixes)))


def _sum_cut(record: Violation, ctx: Context) -> dict[str, int] | None:
    """Each dim's new maximum where the guard is a sum of the dims with positive coefficients
    that must stay under a number; None where it is not, or where no cut keeps each minimum."""
    guard = record.guard
    if not isinstance(guard, (sympy.Le, sympy.Lt)):
        return None
    expr = sympy.expand(guard.lhs - guard.rhs) + (1 if isinstance(guard, sympy.Lt) else 0)  # expr <= 0
    dims = {s.name: s for s in expr.free_symbols}
    roots = {d: ctx.built.names.roots.get(d) for d in named(record)}
    if (
        set(dims) != set(roots)
        or not expr.is_polynomial(*dims.values())
        or sympy.Poly(expr, *dims.values()).total_degree() != 1
    ):
        return None
    weights = {d: expr.coeff(s) for d, s in dims.items()}
    cap = -expr.subs({s: 0 for s in dims.values()})
    if any(not (w.is_Integer and w > 0) for w in weights.values()) or not cap.is_Integer:
        return None
    highs = {d: r.max for d, r in roots.items() if r is not None and isinstance(r.max, int) and r.max < 2**62}
    if len(highs) != len(weights):
        return None
    scale = sympy.Rational(int(cap), sum(int(weights[d]) * highs[d] for d in highs))
    cut = {d: int(sympy.floor(highs[d] * scale)) for d in highs}
    lows = {d: low if isinstance(low := getattr(roots[d], "min", None), int) else 0 for d in cut}
    if any(cut[d] < lows[d] for d in cut) or sum(int(weights[d]) * cut[d] for d in cut) > cap:
        return None
    return cut


def said_declared(record: Violation, declared: str, declared_of: Callable[[str], str]) -> str:
    """ "`a` is declared as [1, 255], or for a relation said once, `a` and `b` are declared as
    [1, 255] and [1, 64] (each as its user declared it)."""
    if not record.together:
        return f"`{record.dims[0]}` is declared as {declared}"
    dims = (record.dims[0], *record.together)
    ranges = (declared, *map(declared_of, record.together))
    return f"{_listed(f'`{d}`' for d in dims)} are declared as {_listed(ranges)}"


def _listed(items) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]
