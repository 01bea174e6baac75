"""Which modules are parts of others (ast; no torch).

A class built in another project module's ``__init__`` (``self.mlp = FeedForward(dim)``,
``nn.ModuleList([Expert(dim) for _ in range(n)])``) is exported inside it: ``exportlens
init`` says it is covered by that parent instead of guessing inputs for it alone, and a
check does not ask for its example inputs. ``ast``, not libcst: a plan reads this on every
save, and a large model file parses ten times faster.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..core.sources import Sources
from ..core.targets import ModuleClass
from .syntax import UNPARSABLE


def parents(
    modules: Iterable[ModuleClass], sources: Sources, among: Iterable[ModuleClass] | None = None
) -> dict[str, str]:
    """Child target -> the target of a project module (of ``among``, else any) whose
    ``__init__`` builds it. A class built by a module of the same file is preferred; a name
    two files define is matched within its own file only."""
    modules = list(modules)
    by_name: dict[str, list[ModuleClass]] = {}
    for m in modules:
        by_name.setdefault(m.name, []).append(m)
    trees: dict[str, ast.Module | None] = {}
    found: dict[str, str] = {}
    for parent in modules if among is None else among:
        if parent.path not in trees:
            trees[parent.path] = _parse(sources.text(parent.path))
        for name in sorted(_built(trees[parent.path], parent.name) - {parent.name}):
            same = [c for c in by_name.get(name, ()) if c.path == parent.path]
            child = same[0] if same else by_name[name][0] if len(by_name.get(name, ())) == 1 else None
            if child is not None:
                found.setdefault(child.target, parent.target)
    return found


def _built(tree: ast.Module | None, name: str) -> set[str]:
    """The names called in class ``name``'s ``__init__`` (``FeedForward``, ``nn.Linear``'s ``Linear``)."""
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if tree else None
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None) if cls else None
    calls = (n.func for n in ast.walk(init) if isinstance(n, ast.Call)) if init else ()
    return {f.attr if isinstance(f, ast.Attribute) else f.id for f in calls if isinstance(f, (ast.Attribute, ast.Name))}


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text is not None else None
    except UNPARSABLE:
        return None
