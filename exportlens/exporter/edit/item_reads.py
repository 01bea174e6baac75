"""A tensor's value read with ``.item()`` where ``int()`` asks for it (libcst, no torch).

``longest = int(lengths.max())`` asks for the number itself while tracing, which export does
not have; ``lengths.max().item()`` is the same number, which export keeps as a value known
only when the program runs (sizes, ``torch.arange`` of it, comparisons as tensors).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import reads_number, replaced, visit_parsed


@dataclass(frozen=True)
class ItemRead:
    text: str  # the file with the ``int(...)`` rewritten
    written: str  # ``int(lengths.max())``
    item: str  # ``lengths.max().item()``


class _IntCalls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int, tensors: frozenset[str]) -> None:
        self.line, self.tensors = line, tensors
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.get_metadata(PositionProvider, node).start.line == self.line and self._of_tensor(node):
            self.found.append(node)

    def _of_tensor(self, call: cst.Call) -> bool:
        """``int(x)`` of one expression that reads a tensor named on the line, not a number."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "int" and len(call.args) == 1):
            return False
        arg = call.args[0]
        return (
            arg.keyword is None
            and not arg.star
            and not reads_number(arg.value)
            and _names(arg.value) & self.tensors != set()
        )


def _names(node: cst.CSTNode) -> set[str]:
    """The variables ``node`` reads (not attribute or keyword names)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _names(node.value)
    if isinstance(node, cst.Arg):
        return _names(node.value)
    return set().union(*(_names(c) for c in node.children))


def int_as_item(text: str, line: int, tensors: frozenset[str]) -> ItemRead | None:
    """The one ``int(<tensor expression>)`` on ``line`` as ``<tensor expression>.item()``
    (``tensors``: the names that hold tensors on that line when forward runs). None where
    the line has none, or more than one."""
    calls = _IntCalls(line, tensors)
    module = visit_parsed(text, calls)
    if module is None or len(calls.found) != 1:
        return None
    (call,) = calls.found
    value = call.args[0].value
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # ``(a + b).item()``
    item = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("item")))
    return ItemRead(replaced(module, call, item).code, module.code_for_node(call), module.code_for_node(item))
