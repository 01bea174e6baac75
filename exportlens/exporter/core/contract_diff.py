"""What changed between two contracts of the same modules (``exportlens diff``):
each change a kind, on the line that caused it where one did, in the user's dim names.
Standard library only; the same inputs give the same changes in the same order."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace

from .contract import Contract
from .guards import Guard, GuardKind
from .report import Range, Status


class ChangeKind(str, enum.Enum):
    MODULE_ADDED = "module-added"
    MODULE_REMOVED = "module-removed"
    STATUS = "status"  # exported, failed or skipped
    SIGNATURE = "signature"  # inputs, outputs, sizes tied to one another
    RANGE = "range"  # a dim's range, where no guard of the change says why
    SPECIALIZATION = "specialization"  # a dim became a constant
    NEW_GUARD = "new-guard"
    REMOVED_GUARD = "removed-guard"
    OP_SET = "op-set"  # an operator the program calls, added or removed
    LOWERING = "lowering"  # a deployment target's verdict

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Change:
    target: str
    kind: ChangeKind
    message: str  # in the user's dim names
    path: str | None = None  # the line that caused it, relative to the project root, where one did
    line: int | None = None


@dataclass(frozen=True)
class Diff:
    changes: tuple[Change, ...]
    compared: int  # modules on either side
    ops_unknown: tuple[str, ...] = ()  # modules one side's report holds no operator set for (before schema 2.3)


_SAID = {
    GuardKind.RANGE: "guard",
    GuardKind.RELATION: "relation",
    GuardKind.SPECIALIZATION: "specialization",
    GuardKind.RUNTIME_ASSERT: "runtime assertion",
}


def diff(old: dict[str, Contract], new: dict[str, Contract]) -> Diff:
    """Every change from ``old`` to ``new``, by module, then line, then kind."""
    changes: list[Change] = []
    for target in sorted(old.keys() - new.keys()):
        changes.append(Change(target, ChangeKind.MODULE_REMOVED, "module removed", old[target].path))
    for target in sorted(new.keys() - old.keys()):
        said = f"new module ({new[target].status})"
        changes.append(Change(target, ChangeKind.MODULE_ADDED, said, new[target].path))
    both = sorted(old.keys() & new.keys())
    for target in both:
        changes += module_changes(old[target], new[target])
    exported = [t for t in both if old[t].status is new[t].status is Status.EXPORTED]
    unknown = tuple(t for t in exported if old[t].ops is None or new[t].ops is None)
    kinds = list(ChangeKind)
    order = sorted(changes, key=lambda c: (c.target, c.path or "", c.line or 0, kinds.index(c.kind), c.message))
    return Diff(tuple(order), len(old.keys() | new.keys()), unknown)


def module_changes(old: Contract, new: Contract) -> list[Change]:
    if old.status is not new.status:
        return [_status(old, new)]
    if new.status is not Status.EXPORTED:
        return []
    t = new.target
    gained = [g for g in new.specializations if g.text not in {s.text for s in old.specializations}]
    lost = [g for g in old.specializations if g.text not in {s.text for s in new.specializations}]
    out = [Change(t, ChangeKind.SPECIALIZATION, f"{_dim(g)} became static: {g.text}", g.path, g.line) for g in gained]
    out += [
        Change(t, ChangeKind.REMOVED_GUARD, f"{_dim(g)} is no longer static (was {g.text})", g.path, g.line)
        for g in lost
    ]
    guards = _guards(old, new)
    out += _ranges(old, new, guards, {d for g in gained + lost for d in g.dims})
    out += _signature(old, new, gained, lost)
    out += _ops(old, new)
    out += _lowerings(old, new)
    return out


def _status(old: Contract, new: Contract) -> Change:
    said = f"{old.status} → {new.status}"
    f = new.failure if new.status is Status.FAILED else None
    if f is None:
        return Change(new.target, ChangeKind.STATUS, said, new.path)
    return Change(new.target, ChangeKind.STATUS, f"{said}: {f.code} {f.message}", f.path, f.line)


def _guards(old: Contract, new: Contract) -> list[tuple[Guard, Change]]:
    """Guards added or removed, each with its change, a guard known by its kind and text: a
    line moved by an edit above it moves its guards, which is no change. A guard that says
    what a specialization says (torch records both) is the specialization's."""
    before = {(g.kind, g.text): g for g in old.guards if g.kind is not GuardKind.SPECIALIZATION}
    after = {(g.kind, g.text): g for g in new.guards if g.kind is not GuardKind.SPECIALIZATION}
    out = []
    for key in after.keys() - before.keys():
        g = after[key]
        if g.text not in {s.text for s in new.specializations}:
            out.append((g, Change(new.target, ChangeKind.NEW_GUARD, f"new {_SAID[g.kind]}: {g.text}", g.path, g.line)))
    for key in before.keys() - after.keys():
        g = before[key]
        if g.text not in {s.text for s in old.specializations}:
            said = f"{_SAID[g.kind]} removed: {g.text}"
            out.append((g, Change(new.target, ChangeKind.REMOVED_GUARD, said, g.path, g.line)))
    return sorted(out, key=lambda gc: (gc[1].path or "", gc[1].line or 0, gc[1].message))


def _ranges(old: Contract, new: Contract, guards: list[tuple[Guard, Change]], static: set[str]) -> list[Change]:
    """The guards' changes, and each dim whose range changed: said with the first guard over
    that dim (that guard is why), else on its own; a dim made static is its specialization's."""
    before, after = {r.name: r for r in old.ranges}, {r.name: r for r in new.ranges}
    out = [change for _, change in guards]
    for name in sorted(before.keys() | after.keys()):
        a, b = before.get(name), after.get(name)
        if name in static or (a and b and (a.low, a.high) == (b.low, b.high)):
            continue
        said = f"range {name}: {_span(a)} → {_span(b)}"
        at = next((i for i, (g, _) in enumerate(guards) if name in g.dims), None)
        if at is None:
            out.append(Change(new.target, ChangeKind.RANGE, said, new.path))
        else:
            out[at] = replace(out[at], message=f"{out[at].message} ({said})")
    return out


def _signature(old: Contract, new: Contract, gained: list[Guard], lost: list[Guard]) -> list[Change]:
    """The signature and the sizes tied to one another, but for what a specialization gained
    or lost says: each side said with the dims static on either side as their sizes."""
    was_sig, was_eq = _static(old.signature, old.equalities, gained)
    now_sig, now_eq = _static(new.signature, new.equalities, lost)
    said = [f"signature {old.signature} → {new.signature}"] if was_sig != now_sig else []
    said += [f"now {e}" for e in sorted(now_eq - was_eq)]
    said += [f"no longer {e}" for e in sorted(was_eq - now_eq)]
    return [Change(new.target, ChangeKind.SIGNATURE, "; ".join(said), new.path)] if said else []


def _static(signature: str, equalities: tuple[str, ...], specializations: list[Guard]) -> tuple[str, set[str]]:
    """A side's signature and equalities with each specialized dim written as its size."""
    eq = set(equalities)
    for g in specializations:
        if len(g.dims) != 1 or g.value is None:
            continue  # (a report before 2.3 says no dim as data: its specialization changes no signature)
        dim, value = g.dims[0], str(g.value)
        signature = _substituted(signature, dim, value)
        eq = {_substituted(e, dim, value) for e in eq} | {f"{dim} = {value}"}
    return signature, {e for e in eq if e.partition(" = ")[0] != e.partition(" = ")[2]}


def _ops(old: Contract, new: Contract) -> list[Change]:
    if old.ops is None or new.ops is None:  # not known on one side: no change can be said
        return []
    added = [Change(new.target, ChangeKind.OP_SET, f"calls {op}", new.path) for op in new.ops if op not in old.ops]
    gone = [
        Change(new.target, ChangeKind.OP_SET, f"no longer calls {op}", new.path) for op in old.ops if op not in new.ops
    ]
    return added + gone


def _lowerings(old: Contract, new: Contract) -> list[Change]:
    before, after = dict(old.lowerings), dict(new.lowerings)
    out = []
    for target in sorted(before.keys() | after.keys()):
        a, b = before.get(target, "not lowered"), after.get(target, "not lowered")
        if a != b:
            out.append(Change(new.target, ChangeKind.LOWERING, f"{target}: {a} → {b}", new.path))
    return out


def _dim(g: Guard) -> str:
    """The dim a specialization makes static, as data (a report before 2.3 names none)."""
    return g.dims[0] if len(g.dims) == 1 else "a size"


def _span(r: Range | None) -> str:
    if r is None:
        return "none"
    return f"[{'-∞' if r.low is None else r.low}, {'∞' if r.high is None else r.high}]"


def _token(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.\[]){re.escape(name)}(?![\w\[])")


def _substituted(text: str, name: str, value: str) -> str:
    return _token(name).sub(value, text)
