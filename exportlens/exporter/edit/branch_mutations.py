"""What a ``torch.cond``/``map``/``scan``/``while_loop`` branch changes of the module's state
(libcst, no torch): torch refuses a branch that mutates ``self``, and names only its own
graph; this finds the user's statement."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

HIGHER_ORDER = frozenset({"cond", "map", "scan", "while_loop", "associative_scan"})


@dataclass(frozen=True)
class Mutation:
    """A statement in a higher-order op's branch function that changes module state."""

    line: int
    code: str  # the statement, ``self.count.add_(1)``
    function: str  # the branch it is in, ``true_fn``
    attribute: str  # what it changes, ``count``


def branch_mutation(text: str, line: int, attribute: str | None = None) -> Mutation | None:
    """In the functions handed to a ``torch.cond``/``map``/``scan``/``while_loop`` call on
    ``line`` (methods as ``self.name``, functions of the file, lambdas), the first statement
    that changes ``self.<attribute>`` (any attribute of ``self`` where None): an in-place
    method (``add_``), an augmented assignment, or an assignment."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    calls = _HigherOrderCalls(line)
    wrapper.visit(calls)
    found = _Mutations(module, set(calls.branches), attribute)
    wrapper.visit(found)
    ranked = sorted(found.found, key=lambda m: (calls.branches.index(m.function), m.line))
    return ranked[0] if ranked else None


class _HigherOrderCalls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.branches: list[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name not in HIGHER_ORDER or self.get_metadata(PositionProvider, node).start.line != self.line:
            return
        for arg in node.args:
            value = arg.value
            if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
                self.branches.append(value.attr.value)
            elif isinstance(value, cst.Name):
                self.branches.append(value.value)


class _Mutations(cst.CSTVisitor):
    """Statements inside the named functions that change an attribute of ``self``."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, module: cst.Module, functions: set[str], attribute: str | None) -> None:
        self.module, self.functions, self.attribute = module, functions, attribute
        self.found: list[Mutation] = []
        self._in: list[str] = []
        self._statement: cst.SimpleStatementLine | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._in.append(node.name.value)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._in.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            self._check(func.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node.target)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._check(node.target)

    def _check(self, target: cst.BaseExpression) -> None:
        owner = _self_attribute(target)
        if not self._in or self._in[-1] not in self.functions or owner is None or self._statement is None:
            return
        if self.attribute and owner != self.attribute:
            return
        line = self.get_metadata(PositionProvider, self._statement).start.line
        code = "; ".join(
            self.module.code_for_node(small).strip() for small in self._statement.body
        )  # without its comment
        self.found.append(Mutation(line, code, self._in[-1], owner))


def _self_attribute(node: cst.BaseExpression) -> str | None:
    """``count`` for ``self.count`` (and ``self.count[0]``, ``self.count.data``)."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        inner = node.value
        if isinstance(node, cst.Attribute) and isinstance(inner, cst.Name) and inner.value == "self":
            return node.attr.value
        node = inner
    return None
