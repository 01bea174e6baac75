"""torch's constraint violations, read once into records in the user's dim names (torch side).

torch reports every violated constraint in one ``UserError`` whose message
lists them as bullets and ends with "Suggested fixes:" lines; nothing
structured survives the raise. This module is the only reader of that message:
each bullet becomes a ``Violation`` or a ``Specialization``, placed on the
user's line through the guards recorded while exporting (``locate.GuardLog``),
and torch's suggested fixes (read in ``changes``) are carried by the records they solve.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

import sympy

from ..compat import messages as forms
from ..compat.internals import is_constraint_violation
from ..compat.messages import search
from ..compat.shape_env import shape_env_hints, shape_env_replacements
from ..fixing.changes import Change, ChangeKind, root_of, suggested_changes
from ..inputs import Built
from ..locate import Event, Frame, GuardLog
from ..naming.guard_ranges import SCAN_LIMIT, finite, isolated, scanned
from ..naming.symbols import Names, SymbolNames, from_shape_env, rename_sources

# -- the records -------------------------------------------------------------------


class ViolationKind(enum.Enum):
    RANGE = enum.auto()  # "Not all values of seq = ... in the specified range ... satisfy the generated guard ..."
    EQUALITY = enum.auto()  # "The values of m = ... and n = ... must always be equal"
    RELATION = enum.auto()  # "The values of m = ... must always be related to the values of n = ... by m = n + 1"
    OTHER = enum.auto()  # a bullet of any other form: said as torch wrote it, in the user's names


_DIM_COUNT = {ViolationKind.RANGE: 1, ViolationKind.EQUALITY: 2, ViolationKind.RELATION: 2}


@dataclass(frozen=True)
class Violation:
    """One violated constraint, in the user's dim names."""

    kind: ViolationKind
    dims: tuple[str, ...]  # the dims torch names in it, the one it blames first
    detail: str  # torch's own words: its bullet
    requirement: str = ""  # what the code needs, in dim names ("seq <= 64", "m = n + 1"); OTHER: the bullet renamed
    declared: str = ""  # RANGE: the range torch printed for the dim ("" where it printed none)
    guard: Any = None  # RANGE: the recorded guard that cuts the range, a sympy relation over dim names
    also: tuple[Any, ...] = ()  # RANGE: the dim's other recorded guards, likewise (what a fix must hold too)
    frame: Frame | None = None  # the user's line that added the guard
    fixes: tuple[Change, ...] = ()  # what solves it: torch's suggestions as read; fixes.verified keeps what works
    always: bool = False  # RANGE: its guard holds at every declared size, and torch refused the range all the same
    together: tuple[str, ...] = ()  # RANGE: the other dims its relation names, said in this one finding

    def __post_init__(self) -> None:
        want = _DIM_COUNT.get(self.kind)
        if want is not None and len(self.dims) != want:
            raise ValueError(f"a {self.kind.name} violation names {want} dims, not {self.dims}")

    @property
    def fixable(self) -> tuple[str, ...]:
        """The dims whose declaration a fix for this violation changes."""
        if self.kind in (ViolationKind.EQUALITY, ViolationKind.RELATION):  # (either may become the other's expression)
            return self.dims
        return () if self.kind is ViolationKind.OTHER else self.dims[:1]

    def __str__(self) -> str:
        return f"{self.kind.name} violation ({', '.join(self.dims)}): {self.requirement}"


@dataclass(frozen=True)
class Specialization:
    """A dim declared dynamic that the code pinned to one size."""

    dim: str
    value: int
    detail: str  # torch's own words: its bullet
    frame: Frame | None = None  # the user's line that pinned it
    fixes: tuple[Change, ...] = ()  # as Violation.fixes
    by_guards: bool = False  # several guards together leave one size: no literal in the code to blame
    derived: tuple[str, int] | None = None  # torch named a derived size (``dimz + 1``, 3): ``dim`` is its root
    cast: bool = False  # ``int()`` of a float made from the dim: torch keeps no such size symbolic
    inside: Frame | None = None  # the installed library's line that pinned it, reached from ``frame``

    @property
    def dims(self) -> tuple[str, ...]:
        return (self.dim,)

    @property
    def fixable(self) -> tuple[str, ...]:
        return (self.dim,)

    def __str__(self) -> str:
        return f"{self.dim} specialized to {self.value}"


Constraint = Violation | Specialization


# -- reading torch's message -------------------------------------------------------


def read_violations(msg: str, log: GuardLog, built: Built) -> tuple[Constraint, ...]:
    """Each bullet of torch's message (``UserError.msg``), placed on the user's line, with torch's fixes for it."""
    names = from_shape_env(log.shape_env, built.names)
    items = _bullets(msg) or [first_line(msg)]
    placed = tuple(_pinned(_place(_parse(item), log, names, built.names), built.names) for item in items)
    changes = suggested_changes(msg, built.dynamic_shapes)
    return tuple(replace(r, fixes=tuple(c for c in changes if c.dim in r.fixable) or _static(r)) for r in placed)


def _static(record: Constraint) -> tuple[Change, ...]:
    """torch suggests nothing for a derived size it pinned, nor for a size made a float and
    back: the dim at the pinned size."""
    if isinstance(record, Specialization) and (record.derived or record.cast):
        return (Change(record.dim, ChangeKind.STATIC, value=str(record.value)),)
    return ()


def failed_dims(exc: BaseException | None) -> set[str]:
    """The dims a constraint violation names; none for a success or any other failure."""
    if not is_constraint_violation(exc):
        return set()
    return {dim for item in _bullets(exc.msg) for dim in _parse(item).dims}


def _bullets(msg: str) -> list[str]:
    """The bullets before "Suggested fixes:", one per violated constraint, continuation lines joined."""
    items: list[str] = []
    for line in forms.HEADLINES.sub("\n", msg.split(forms.SUGGESTED, 1)[0]).splitlines():
        m = forms.BULLET.match(line)
        if m:
            items.append(m.group(1).strip())
        elif items and line.startswith("    "):
            items[-1] += " " + line.strip()
    return items


def first_line(text: str) -> str:
    """The first non-blank line of torch's text, stripped."""
    return next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")


def _parse(item: str) -> Constraint:
    """One bullet in torch's words: a RANGE requirement is still torch's guard, over its sources."""
    if m := search(forms.SPECIALIZED, item):
        return _specialization(m["dim"], int(m["value"]), item, by_guards=False)
    if m := search(forms.SPECIALIZED_BY_GUARDS, item):
        return _specialization(m["dim"], int(m["value"]), item, by_guards=True)
    if m := search(forms.EQUAL, item):
        return Violation(ViolationKind.EQUALITY, (m["a"], m["b"]), item, requirement=f"{m['a']} = {m['b']}")
    if m := search(forms.RELATED, item):
        return Violation(ViolationKind.RELATION, (root_of(m["a"]), root_of(m["b"])), item, requirement=m["by"])
    if m := search(forms.RANGE, item):  # a derived size's range is its root's: ``dy - 6 >= 3`` is ``dy >= 9``
        return Violation(
            ViolationKind.RANGE,
            (root_of(m["dim"]),),
            item,
            requirement=m["guard"].rstrip("."),
            declared=m["declared"] or "",
        )  # torch's full stop
    return Violation(ViolationKind.OTHER, tuple(dict.fromkeys(forms.NAMED.findall(item))), item, requirement=item)


def _specialization(name: str, value: int, item: str, by_guards: bool) -> Specialization:
    """torch names a derived size by its expression (``dimz + 1``): the record is on its root."""
    if name.isidentifier():
        return Specialization(name, value, item, by_guards=by_guards)
    try:
        expr = sympy.sympify(name)
        (root,) = expr.free_symbols
        (solved,) = sympy.solve(sympy.Eq(expr, value), root)
    except (sympy.SympifyError, TypeError, ValueError):
        return Specialization(name, value, item, by_guards=by_guards)
    if not solved.is_integer:
        return Specialization(name, value, item, by_guards=by_guards)
    return Specialization(str(root), int(solved), item, by_guards=by_guards, derived=(name, value))


# torch's sympy functions for Python's float -> int (``int()``, ``math.floor``, ``round``)
_TO_INT = frozenset({"TruncToInt", "FloorToInt", "CeilToInt", "RoundToInt"})


def _pinned(record: Constraint, user: Names) -> Constraint:
    """A range cut to one size by ``int()`` of a float made from the dim (``int(n * 1.5) ==
    60``): no range of the dim but that size holds, so it is the dim specialized there."""
    if not isinstance(record, Violation) or record.kind is not ViolationKind.RANGE or record.guard is None:
        return record
    if not any(type(a).__name__ in _TO_INT for a in sympy.preorder_traversal(record.guard)):
        return record
    root = user.roots.get(record.dims[0])
    lo, hi = getattr(root, "min", None), getattr(root, "max", None)
    if not (finite(lo) and finite(hi)) or hi - lo > SCAN_LIMIT or len(record.guard.free_symbols) != 1:
        return record
    (sym,) = record.guard.free_symbols
    try:
        holds = [v for v in range(int(lo), int(hi) + 1) if bool(record.guard.subs(sym, v))]
    except TypeError:
        return record
    if len(holds) != 1:
        return record
    return Specialization(record.dims[0], holds[0], record.detail, frame=record.frame, cast=True)


# -- placing a record on the user's line --------------------------------------------------


def _place(record: Constraint, log: GuardLog, names: SymbolNames, user: Names) -> Constraint:
    """The record in the user's names, on the line whose recorded guard (or replacement) caused it."""
    symbols: dict[str, set[sympy.Symbol]] = {}
    for sym, name in names.message.items():
        symbols.setdefault(name, set()).add(sym)
    mine = [symbols.get(d, set()) for d in record.dims]
    if isinstance(record, Specialization):
        pinned = mine[0] | (symbols.get(record.derived[0], set()) if record.derived else set())
        event = log.first(pinned, ("replace", "guard"))
        return replace(record, frame=_frame(event), inside=_pinned_inside(log, pinned, record.value) or _inside(event))
    if record.kind is ViolationKind.EQUALITY:
        event = _first_both(log, *mine) if mine[1] else log.first(mine[0])
        return replace(record, frame=_frame(event))
    if record.kind is ViolationKind.RELATION:
        return replace(record, frame=_frame(_first_both(log, *mine)))
    if record.kind is ViolationKind.RANGE:
        return _place_range(record, log, names, user)
    return replace(record, requirement=names.text(rename_sources(record.detail, user)))


def _place_range(record: Violation, log: GuardLog, names: SymbolNames, user: Names) -> Violation:
    dim = record.dims[0]
    over_root = _over_root(names, dim)
    found = _cutting_guard(log, over_root, user.roots.get(dim))
    if found is None:
        return replace(record, requirement=rename_sources(record.requirement, user))
    event, expr = found
    on_root = expr.xreplace(over_root)
    guard = on_root.xreplace({s: sympy.Symbol(n) for s, n in names.message.items()})
    requirement = names.say(on_root)
    also = _also(log, over_root, names, guard)
    if _always(guard, user.roots.get(dim)):  # nothing to solve: torch's range analysis could not prove it
        return replace(record, requirement=requirement, guard=guard, also=also, frame=event.frame, always=True)
    alone = isolated(guard, dim) or scanned(guard, dim, user.roots.get(dim))
    if alone and alone != requirement:  # ``seq + 1 <= 16``, i.e. ``seq <= 15``
        requirement += f"`, i.e. `{alone}"
    return replace(record, requirement=requirement, guard=guard, also=also, frame=event.frame)


def _always(guard: Any, root: Any) -> bool:
    """Whether ``guard``, over one dim, holds at every size its declaration (``root``, a torch
    Dim) allows: ``n <= max(16, n)``, which torch 2.13's value ranges cannot prove."""
    if guard is None or len(getattr(guard, "free_symbols", ())) != 1:
        return False
    (sym,) = guard.free_symbols
    size = sympy.Symbol(str(sym), integer=True, nonnegative=True)
    try:
        if sympy.simplify(guard.xreplace({sym: size})) == sympy.true:
            return True
        lo, hi = getattr(root, "min", None), getattr(root, "max", None)
        lo = int(lo) if finite(lo) else 0
        if not finite(hi) or hi - lo > SCAN_LIMIT:
            return False
        sizes = (lo, int(hi), *range(lo, int(hi) + 1))  # the bounds first: where a cutting guard breaks
        return all(bool(guard.xreplace({sym: sympy.Integer(v)})) for v in sizes)
    except Exception:  # sympy cannot decide it, or torch's functions refuse a size (a negative Mod): not known
        return False


def _also(log: GuardLog, over_root: dict[sympy.Symbol, Any], names: SymbolNames, cutting: Any) -> tuple[Any, ...]:
    """The other guards recorded on the dim alone (``y // 2 != 1`` beside ``y % 2 == 0``), over its name."""
    symbols, out = set(over_root), []
    replacements = shape_env_replacements(log.shape_env)
    for event in log.events:
        expr = _replaced(event.expr, replacements)
        if event.kind != "guard" or not expr.free_symbols or not expr.free_symbols <= symbols:
            continue
        on_root = expr.xreplace(over_root)
        if on_root not in (cutting, sympy.true, sympy.false) and on_root not in out:
            out.append(on_root)
    return tuple(out)


def _frame(event: Event | None) -> Frame | None:
    return event.frame if event is not None else None


def _inside(event: Event | None) -> Frame | None:
    return event.inside if event is not None else None


def _pinned_inside(log: GuardLog, mine: set[sympy.Symbol], value: int) -> Frame | None:
    """The library line where the dim became ``value`` (its ``Eq``), rather than the first
    library guard on it: a size test earlier in the library is not what pinned it."""
    for event in log.events:
        expr = event.expr
        if isinstance(expr, sympy.Eq) and expr.free_symbols & mine and expr.free_symbols <= mine:
            if value in (expr.lhs, expr.rhs) and event.inside is not None:
                return event.inside
    return None


def _first_both(log: GuardLog, a: set[sympy.Symbol], b: set[sympy.Symbol]) -> Event | None:
    """The first located event over symbols of both dims, else over either."""
    for event in log.events:
        free = event.expr.free_symbols
        if event.frame and free & a and free & b:
            return event
    return log.first(a | b)


def _over_root(names: SymbolNames, dim: str) -> dict[sympy.Symbol, Any]:
    """Each symbol of the dim and of its derived sizes -> its size as an expression of the
    dim (``s17`` of ``dy - 6`` -> ``dy - 6``), so a guard on a derived size is one on its root."""
    root = sympy.Symbol(dim, integer=True)
    out = {}
    for sym, name in names.message.items():
        try:
            size = sympy.sympify(name, locals={dim: root})
        except (sympy.SympifyError, SyntaxError, TypeError):
            continue
        if size.free_symbols == {root}:
            out[sym] = size
    return out


def _cutting_guard(log: GuardLog, over_root: dict[sympy.Symbol, Any], root: Any) -> tuple[Event, Any] | None:
    """The first located guard that some value of the dim's declared range (``root``, a torch
    Dim) breaks, probing the bounds and a few sizes; else the first located guard on the dim.
    With it, the guard as torch finally holds it: a derived dim's symbol (``x.shape[0]`` of
    ``seq + 1``) replaced by its expression of the root, so ``Eq(s77 - 1, s17)``, which only
    ties the two, is true for every value and never the one that cuts."""
    lo, hi = getattr(root, "min", None), getattr(root, "max", None)
    env = log.shape_env
    replacements, hints = shape_env_replacements(env), shape_env_hints(env)
    near = [v + d for v, d in ((lo, 1), (hi, -1)) if isinstance(v, int)]  # one past a bound: what a modulo guard breaks
    probes = [v for v in (lo, hi, *near, 0, 1, 2, 10**6) if isinstance(v, int) and v < 2**62]
    probes = [v for v in probes if (lo is None or v >= lo) and (hi is None or v <= hi)]
    symbols = set(over_root)
    dim = next(iter(over_root.values())).free_symbols.pop() if over_root else None
    for event in log.events:
        if event.kind != "guard" or not event.frame:
            continue
        expr = _replaced(event.expr, replacements)
        if expr.free_symbols & symbols and any(
            _breaks(expr.xreplace(over_root), hints, dim, value) for value in probes
        ):
            return event, expr
    last = log.first(symbols, ("guard",))
    expr = _replaced(last.expr, replacements) if last is not None else None
    return (
        (last, expr) if last is not None and expr is not None and expr is not sympy.true else None
    )  # (``Eq(s77 - 3, s68)``, once replaced)


def _replaced(expr: Any, replacements: dict) -> Any:
    try:
        return expr.xreplace(replacements) if replacements else expr
    except (TypeError, AttributeError):
        return expr


def _breaks(guard: Any, hints: dict, sym: sympy.Symbol, value: int) -> bool:
    """Whether ``guard`` is false at ``sym = value``, the other symbols at the example's sizes."""
    try:
        return guard.xreplace({**hints, sym: sympy.Integer(value)}) == sympy.false
    except (TypeError, AttributeError):
        return False
