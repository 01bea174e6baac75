"""Modules the spec declares with a ``factory`` and no class of the project behind them
(``factory = "transformers:BertModel"``): the project file the table names holds them (no torch)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.sources import Sources
from ..core.targets import ModuleClass, Span, Target


def declared_module(target: str, table: Any, sources: Sources) -> ModuleClass | None:
    """The module of a table keyed ``path.py:Name`` with a factory, where ``path.py`` is a
    project file: placed on ``Name``'s or the factory's definition in it if either is there,
    else on its first line. None for a table without a factory or a file that is not there."""
    if not isinstance(table, dict) or "factory" not in table:
        return None
    t = Target.parse(target)
    if not sources.exists(t.path):
        return None
    try:
        lines = sources.decode(t.path).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    factory = str(table["factory"])
    names = [t.name] + ([factory.rpartition(":")[2].split(".")[0]] if factory.rpartition(":")[0] == t.path else [])
    span = _definition(lines, names)
    return ModuleClass(t.path, t.name, span, span, (), None)


def _definition(lines: list[str], names: list[str]) -> Span:
    for name in names:
        pattern = re.compile(rf"^(async\s+def|def|class)\s+({re.escape(name)})\b|^({re.escape(name)})\s*[:=]")
        for i, text in enumerate(lines, 1):
            m = pattern.match(text)
            if m:
                group = 2 if m.group(2) else 3
                return Span(i, m.start(group) + 1, i, m.end(group) + 1)
    return Span(1)


def declared_in(
    rel: str, tables: Mapping[str, tuple[Any, Any]], known: Iterable[str], sources: Sources
) -> list[ModuleClass]:
    """The modules factory tables declare in project file ``rel`` (POSIX, from the root),
    but those of a class already found there (``known``: their targets); once each, however
    many variants its table has."""
    seen = set(known)
    out = []
    for target, (table, _) in tables.items():
        t = Target.parse(target)
        if t.path == rel and t.module not in seen:
            found = declared_module(target, table, sources)
            if found is not None:
                seen.add(t.module)
                out.append(found)
    return out


def declaring(tables: Mapping[str, tuple[Any, Any]]) -> set[str]:
    """The project files (POSIX, from the root) that factory tables name."""
    return {Target.parse(t).path for t, (table, _) in tables.items() if isinstance(table, dict) and "factory" in table}
