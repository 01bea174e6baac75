"""Variants: several specs for one class, ``[[tool.exportlens.modules."m.py:Bert".variants]]``,
each with a ``name``, checked and reported as ``m.py:Bert[name]`` (no torch).

A variant inherits the class table's keys; a key it writes replaces the class's, except
``init``, ``inputs`` and ``dims``, which merge one level deep (the variant's entry of a
name replaces the class's entry of that name). The class table itself is then not
checked on its own: only its variants are."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..core import codes
from ..core.report import Finding
from ..core.targets import Location, Span, Target
from .pyproject import Pyproject

MERGED = ("init", "inputs", "dims")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def expand(
    tables: dict[str, tuple[Any, Location]], tree: Pyproject, findings: list[Finding]
) -> dict[str, tuple[Any, Location]]:
    """``tables`` with each class that has variants replaced by one table per variant,
    keyed by ``path.py:Class[name]``; a variant without a good, unique name is an error."""
    out: dict[str, tuple[Any, Location]] = {}
    for target, (table, loc) in tables.items():
        if not isinstance(table, dict) or "variants" not in table:
            out[target] = (table, loc)
            continue
        out.update(_variants(target, table, loc, tree, findings))
    return out


def _variants(
    target: str, table: dict[str, Any], loc: Location, tree: Pyproject, findings: list[Finding]
) -> dict[str, tuple[Any, Location]]:
    raw = table["variants"]
    if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
        message = (
            f"variants of {target} must be an array of tables, each with a name:"
            f' [[tool.exportlens.modules."{target}".variants]]'
        )
        findings.append(codes.finding(codes.SPEC_INVALID, message, loc.path, loc.line))
        return {}
    base = {k: v for k, v in table.items() if k != "variants"}
    out: dict[str, tuple[Any, Location]] = {}
    of_class = Target.parse(target)  # the table's key, taken apart once for all its variants
    for index, variant in enumerate(raw):
        # where it is written: its [[...variants]] header, its name (an inline array), else the class's table
        line = (tree.variant_home(target, index) or loc.span).line
        name, where = variant.get("name"), Location(loc.path, Span(line))
        problem = _name_problem(name, target, of_class, out)
        if problem:
            findings.append(codes.finding(codes.SPEC_INVALID, problem, where.path, line))
            continue
        own = {k: v for k, v in variant.items() if k != "name"}
        out[str(of_class.of_variant(name))] = (merge(base, own), where)
    return out


def _name_problem(name: Any, target: str, of_class: Target, taken: dict[str, Any]) -> str | None:
    if name is None:
        return f'a variant of {target} has no name: give each one name = "small"'
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return f"variant name {name!r} of {target} must be letters, digits, '_', '-' or '.'"
    if str(of_class.of_variant(name)) in taken:
        return f"variant name '{name}' is used twice for {target}: each variant needs a name of its own"
    return None


def merge(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """The class table's keys with the variant's over them (MERGED keys one level deep)."""
    out = dict(base)
    for key, value in own.items():
        if key in MERGED and isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = {**base[key], **value}
        else:
            out[key] = value
    return out


def named(findings: Iterable[Finding], target: Target | str) -> tuple[Finding, ...]:
    """A variant's findings, each message starting with ``Class[variant]: `` so that every
    output (text, JSON, SARIF, the editor) says which variant it is about. Each finding is
    named once, where its report is made (the plan's spec errors, the worker's export)."""
    t = target if isinstance(target, Target) else Target.parse(target)
    if t.variant is None:
        return tuple(findings)
    return tuple(replace(f, message=f"{t.name}[{t.variant}]: {f.message}") for f in findings)
