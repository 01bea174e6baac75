"""A relation of several dims said once: torch reports `new_len + past_len <= 256` once per
dim it names (each "not all values of new_len …"), and a finding per dim says the same
requirement twice on one line, each as if only its own dim were at fault. The violations of
one line that require the same relation are one record naming every dim; where the relation
is a sum that must fit, its first fix cuts the dims together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...core.report import Finding, Fix, Narrowing
from ..context import Context
from ..fixing.changes import Change, ChangeKind
from ..fixing.fixes import spec_fixes
from ..proving.corners import names_in
from ..proving.relations import binding, sum_cut
from ..reading.violations import Constraint, Violation, ViolationKind
from .symbols import pretty


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


def widened(record: Constraint, ctx: Context) -> Constraint:
    """A range violation as the relation it is: its guard's one part a declared size breaks
    (`seq + start_pos >= 0 and seq + start_pos <= 64` is `seq + start_pos <= 64`), naming
    every dim of the spec it bounds, where torch blamed one (an int input's dim has no
    violation of its own)."""
    if not isinstance(record, Violation) or record.kind is not ViolationKind.RANGE or record.guard is None:
        return record
    roots = ctx.built.names.roots
    guard = binding(record.guard, roots)
    requirement = pretty(guard) if guard is not record.guard else record.requirement
    over = sorted(s.name for s in guard.free_symbols if s.name in roots)
    others = tuple(d for d in over if d not in (*record.dims, *record.together))
    if len(over) < 2 or (guard is record.guard and not others):
        return record  # (a guard of one dim keeps torch's words and their solved form)
    return replace(record, guard=guard, requirement=requirement, together=(*record.together, *others))


def with_shared_cut(record: Constraint, finding: Finding, ctx: Context) -> Finding:
    """``finding`` naming every dim of its relation; where the relation is a sum that must fit
    (`new_len + past_len <= 256`), first the fix that keeps every dim dynamic with maxima whose
    sum fits, each cut in proportion to its declared maximum: one dim's cut alone cannot
    satisfy a relation of several (its proof then folds in round after round)."""
    finding = replace(finding, dims=named(record))
    if not isinstance(record, Violation) or not record.together:
        return finding
    cut = shared_cut(record.guard, named(record), ctx)
    if cut is None:
        return finding
    return replace(finding, fixes=(cut, *(replace(f, preferred=False) for f in finding.fixes)))


def shared_cut(guard: Any, dims: tuple[str, ...], ctx: Context) -> Fix | None:
    """The preferred fix of a sum of ``dims`` that must fit (``guard``): every dim's maximum cut
    in proportion (relations.sum_cut), those it changes said in one fix; None where it is not
    such a sum."""
    maxima = sum_cut(guard, ctx.built.names.roots)
    if not maxima or set(maxima) != set(dims):
        return None
    roots = ctx.built.names.roots
    changes = tuple(Change(d, ChangeKind.BOUNDS, max=maxima[d]) for d in dims if maxima[d] != roots[d].max)
    parts = spec_fixes(changes, ctx)
    if not changes or len(parts) != len(changes):
        return None
    action = " and ".join(p.action[:1].lower() + p.action[1:] if i else p.action for i, p in enumerate(parts))
    edits = tuple(e for p in parts for e in p.edits)
    return Fix(action, edits, preferred=True, rank=Narrowing.RANGE)


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
