"""``exportlens record``'s tables: what the recorded calls say of each module's spec.

A size that differs between calls becomes a dim bounded by the least and most seen (the same
sizes call by call in two places: the same dim); a size every call had stays a number; an
integer tensor keeps the range of the values it held (``low``, ``high``), since indices must
stay in range. The constructor arguments called most are ``init``. The tables are written as
``init`` writes its own (``with_tables``, the same link-safe write), each under a comment
naming the command and the calls it made. No torch here.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING, Any

import tomlkit

from .exporter.core.recorded import CODEC, Kind, Recorded
from .exporter.edit.scaffold import with_tables
from .exporter.spec.loading import PYPROJECT
from .exporter.spec.shapes import DTYPES
from .init import needs, own_pyproject_text, write_pyproject
from .printed import say

if TYPE_CHECKING:
    from .projects import Project

_SHORT = {long: short for short, long in reversed(DTYPES.items())}  # "bool", not "b8"
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # what a TOML comment may not hold


def unspecified(project: Project) -> dict[str, str]:
    """Each module with no spec that no parent builds: its target → its class's name."""
    need = needs(project.plan)
    wanted = set(need.guesses) | set(need.unguessable)
    return {m.target: m.module.name for m in project.plan.modules if m.target in wanted}


def write_project(project: Project, watched: dict[str, str], recorded, command: str, dry_run: bool) -> int:
    tables = {}
    for target in sorted(watched):
        if target not in recorded:
            say(f"{project.shown(target)}: not called by the command: no spec recorded")
            continue
        table, said = _table(_busiest(recorded[target]), command)
        tables[target] = table
        say(f"{project.shown(target)}: {'' if dry_run else 'wrote a spec; '}{said}")
    if not tables:
        return 0
    root = project.plan.root
    before = own_pyproject_text(root)
    after = with_tables(before, tables)
    shown = project.shown(PYPROJECT)
    if dry_run:
        say(
            "".join(difflib.unified_diff((before or "").splitlines(True), after.splitlines(True), shown, shown)), end=""
        )
    else:
        write_pyproject(root / PYPROJECT, after, shown, existed=before is not None)
    return len(tables)


def _busiest(records: list[Recorded]) -> Recorded:
    """The constructor arguments called most, all processes' calls of them together."""
    groups: dict[str, list[Recorded]] = {}
    for r in records:
        groups.setdefault(json.dumps(r.init, sort_keys=True, default=repr), []).append(r)
    group = max(groups.values(), key=lambda rs: sum(r.seen for r in rs))
    calls = list({CODEC.dumps(c): c for r in group for c in r.calls}.values())  # a value may be a list: no hash
    return Recorded(group[0].target, group[0].init, group[0].unwritten, tuple(calls), sum(r.seen for r in group))


def _table(r: Recorded, command: str) -> tuple[tomlkit.items.Table, str]:
    """The module's table, and what it says in a few words."""
    inputs, dims, notes = infer(r)
    table = tomlkit.table()
    table.add(tomlkit.comment(_comment(f"recorded from: {command}, {r.seen} call{'s' if r.seen != 1 else ''}")))
    for note in notes:
        table.add(tomlkit.comment(_comment(f"  {note}")))
    init = {k: v for k, v in r.init.items() if _toml_value(v)}
    unwritten = [*r.unwritten, *(k for k in r.init if k not in init)]
    if init or unwritten:
        table["init"] = _inline(init)
        if unwritten:
            table["init"].comment(_comment(f"TODO: also pass {', '.join(unwritten)} (not a plain value)"))
    table["inputs"] = _inline({n: _inline(v) if isinstance(v, dict) else v for n, v in inputs.items()})
    if dims:
        table["dims"] = _inline({n: _inline(d) for n, d in dims.items()})
    varying = ", ".join(f"{n} {d['min']}..{d['max']}" for n, d in dims.items()) or "every size the same in each call"
    return table, f"{r.seen} call{'s' if r.seen != 1 else ''} seen, {len(r.calls)} kept; {varying}"


def infer(r: Recorded) -> tuple[dict[str, Any], dict[str, dict[str, int]], list[str]]:
    """``inputs`` and ``dims`` from the calls kept: a size that differs between calls is a dim
    (the same sizes call by call: the same dim), bounded by the least and most seen."""
    names = [n for n, _ in r.calls[0].inputs if all(n in dict(c.inputs) for c in r.calls)]
    inputs: dict[str, Any] = {}
    dims: dict[str, dict[str, int]] = {}
    named: dict[tuple[int, ...], str] = {}
    notes: list[str] = []
    for name in names:
        seen = [dict(c.inputs)[name] for c in r.calls]
        first = seen[0]
        if first.kind is Kind.TENSOR and all(s.kind is Kind.TENSOR and len(s.shape) == len(first.shape) for s in seen):
            sizes = [_size(tuple(s.shape[axis] for s in seen), axis, named, dims) for axis in range(len(first.shape))]
            shape = f"{_SHORT.get(first.dtype, first.dtype)}[{', '.join(sizes)}]"
            ranges = [s.value for s in seen if isinstance(s.value, list) and len(s.value) == 2]
            low, high = min((v[0] for v in ranges), default=None), max((v[1] for v in ranges), default=None)
            inputs[name] = {"shape": shape, "low": low, "high": high} if ranges else shape
        elif first.kind is Kind.VALUE and first.value is not None and _toml_value(first.value):
            inputs[name] = first.value
            if any(s.value != first.value for s in seen):
                notes.append(f"{name}: differed between calls; the first call's value is written")
        elif first.kind is not Kind.VALUE:
            what = first.type_name or "a tensor of another rank in some calls"
            notes.append(f"TODO: {name} was {what}: write it by hand (docs/spec.md)")
    return inputs, dims, notes


def _size(sizes: tuple[int, ...], axis: int, named: dict[tuple[int, ...], str], dims: dict) -> str:
    """One axis's size: a number where every call had it, else the dim of these sizes."""
    if len(set(sizes)) == 1:
        return str(sizes[0])
    if sizes not in named:
        base = "batch" if axis == 0 else "seq" if axis == 1 else f"size{axis}"
        name = base if base not in dims else next(f"{base}{i}" for i in range(2, 1000) if f"{base}{i}" not in dims)
        named[sizes] = name
        dims[name] = {"min": min(sizes), "max": max(sizes)}
    return named[sizes]


def _toml_value(value: Any) -> bool:
    """TOML has no null: a value holding None cannot be written."""
    if isinstance(value, (list, tuple)):
        return all(_toml_value(v) for v in value)
    if isinstance(value, dict):
        return all(_toml_value(v) for v in value.values())
    return value is not None


def _comment(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _inline(values: dict[str, Any]) -> tomlkit.items.InlineTable:
    t = tomlkit.inline_table()
    t.update(values)
    return t
