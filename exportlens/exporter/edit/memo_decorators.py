"""A cache decorator taken off the function a line calls (libcst, no torch):
``@functools.lru_cache`` on ``positions(n)`` hashes ``n``, which torch.export makes a
symbolic size it cannot hash. The exported program runs the function's body once per
call anyway, so the cache adds nothing to it."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import visit_parsed

CACHES = frozenset({"lru_cache", "cache", "functools.lru_cache", "functools.cache"})


@dataclass(frozen=True)
class Uncached:
    function: str  # the memoized function's name
    decorator: str  # the decorator as written, without its ``@``
    text: str  # the file without it


def uncached(text: str, line: int) -> Uncached | None:
    """The file with the cache decorator removed from the function (of this file) that a call
    on ``line`` names, by its name or as ``self.<name>``; None where no call there is one's."""
    finder = _Finder(line)
    parsed = visit_parsed(text, finder)
    if parsed is None:
        return None
    for name in finder.called:
        if (found := finder.cached.get(name)) is not None:
            node, decorator = found
            new = node.with_changes(decorators=[d for d in node.decorators if d is not decorator])
            module = parsed
            code = module.code_for_node(decorator.decorator)
            return Uncached(name, code, module.deep_replace(node, new).code)  # type: ignore[union-attr]
    return None


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.called: list[str] = []
        self.cached: dict[str, tuple[cst.FunctionDef, cst.Decorator]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            if _name(decorator.decorator) in CACHES:
                self.cached.setdefault(node.name.value, (node, decorator))

    def visit_Call(self, node: cst.Call) -> None:
        if self.get_metadata(PositionProvider, node).start.line != self.line:
            return
        func = node.func
        if isinstance(func, cst.Name):
            self.called.append(func.value)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self.called.append(func.attr.value)


def _name(expr: cst.BaseExpression) -> str:
    """``functools.lru_cache`` of ``@functools.lru_cache(maxsize=8)``: the callee, dotted."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return f"{expr.value.value}.{expr.attr.value}"
    return ""
