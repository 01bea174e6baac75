"""Which modules are parts of others (libcst; no torch).

A class built in another project module's ``__init__`` (``self.mlp = FeedForward(dim)``,
``nn.ModuleList([Expert(dim) for _ in range(n)])``) is exported inside it: ``exportlens
init`` says it is covered by that parent instead of guessing inputs for it alone.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..core.sources import Sources
from ..core.targets import ModuleClass
from .reading import find_class, method


class _Built(cst.CSTVisitor):
    """The names called in a constructor."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name:
            self.names.add(name)


def parents(modules: Iterable[ModuleClass], sources: Sources) -> dict[str, str]:
    """Child target -> the target of a project module whose ``__init__`` builds it. A class
    built by a module of the same file is preferred; a name two files define is matched
    within its own file only."""
    modules = list(modules)
    by_name: dict[str, list[ModuleClass]] = {}
    for m in modules:
        by_name.setdefault(m.name, []).append(m)
    trees: dict[str, cst.Module | None] = {}
    found: dict[str, str] = {}
    for parent in modules:
        if parent.path not in trees:
            text = sources.text(parent.path)
            trees[parent.path] = _parse(text)
        tree = trees[parent.path]
        cls = find_class(tree, parent.name) if tree is not None else None
        init = method(cls, "__init__") if cls is not None else None
        if init is None:
            continue
        built = _Built()
        init.visit(built)
        for name in sorted(built.names - {parent.name}):
            same = [c for c in by_name.get(name, ()) if c.path == parent.path]
            child = same[0] if same else by_name[name][0] if len(by_name.get(name, ())) == 1 else None
            if child is not None:
                found.setdefault(child.target, parent.target)
    return found


def _parse(text: str | None) -> cst.Module | None:
    try:
        return cst.parse_module(text) if text is not None else None
    except cst.ParserSyntaxError:
        return None
