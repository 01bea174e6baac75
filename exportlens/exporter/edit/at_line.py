"""Positions in the user's Python source (libcst, no torch).

libcst lines are 1-based and columns 0-based; findings are 1-based in both.
``_span`` is the one place that converts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeGuard

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ..core.targets import Span


@dataclass(frozen=True)
class Statement:
    """The simple or compound-statement header that holds a line."""

    span: Span
    indent: str  # leading whitespace of its first line
    code: str  # the statement's header text (for compound statements: up to the colon)


def _span(r: CodeRange) -> Span:
    return Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)


def _ends(s: Span) -> tuple[int, int]:
    """Where ``s`` ends: a span made by ``_span`` always says."""
    return (s.end_line or s.line, s.end_column or s.column)


def _normal(code: str) -> str:
    return re.sub(r"\s+", "", code)


class _Index(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.expressions: list[tuple[Span, cst.BaseExpression]] = []
        self.statements: list[tuple[Span, cst.CSTNode]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        pos = self.get_metadata(PositionProvider, node, None)
        if pos is None:
            return True
        if isinstance(node, cst.BaseExpression):
            self.expressions.append((_span(pos), node))
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.statements.append((_span(pos), node))
        return True


@dataclass
class SourceIndex:
    module: cst.Module
    expressions: list[tuple[Span, cst.BaseExpression]]
    statements: list[tuple[Span, cst.CSTNode]]
    lines: list[str]

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def statement_at(self, line: int) -> Statement | None:
        """The innermost statement whose header covers ``line``."""
        best = None
        for place, node in self.statements:
            header_end = _ends(place)[0]
            if isinstance(node, cst.BaseCompoundStatement):
                header_end = self._header_end(node, place)
            if place.line <= line <= header_end and (best is None or place.line >= best[0].line):
                best = (place, node, header_end)
        if best is None:
            return None
        place, node, header_end = best
        first = self.lines[place.line - 1]
        indent = first[: len(first) - len(first.lstrip())]
        code = "\n".join(self.lines[place.line - 1 : header_end]).strip()
        return Statement(
            Span(place.line, len(indent) + 1, header_end, len(self.lines[header_end - 1].rstrip()) + 1), indent, code
        )

    def _header_end(self, node: cst.BaseCompoundStatement, place: Span) -> int:
        body = getattr(node, "body", None)
        for p, n in self.statements:
            if body is not None and isinstance(body, cst.IndentedBlock) and body.body and n is body.body[0]:
                return max(place.line, p.line - 1)
        return place.line

    def expression_on(self, line: int, text: str) -> Span | None:
        """The smallest expression starting on ``line`` whose code is ``text`` (spaces ignored)."""
        want = _normal(text)
        hits = [p for p, n in self.expressions if p.line == line and _normal(self.code(n)) == want]
        return min(hits, key=lambda p: (_ends(p)[0] - p.line, _ends(p)[1] - p.column), default=None)


@lru_cache(maxsize=64)
def index(text: str) -> SourceIndex | None:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    visitor = _Index()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    return SourceIndex(module, visitor.expressions, visitor.statements, text.splitlines())


_Flippable = cst.GreaterThan | cst.LessThanEqual | cst.LessThan | cst.GreaterThanEqual | cst.Equal | cst.NotEqual
_FLIPPABLE = (cst.GreaterThan, cst.LessThanEqual, cst.LessThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_NEGATED: dict[type[_Flippable], type[_Flippable]] = {
    cst.GreaterThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.LessThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
}


def branch_test(text: str, line: int) -> str | None:
    """The condition of the ``if``/``elif``/``while`` (or ``assert``) on ``line``, as written,
    when it is one comparison of two operands (``probs.max().item() > self.threshold``)."""
    found, idx = _branch_comparison(text, line), index(text)
    return idx.code(found) if found is not None and idx is not None else None


def _branch_comparison(text: str, line: int) -> cst.Comparison | None:
    idx = index(text)
    found = None
    for place, node in idx.statements if idx else ():
        if place.line != line:
            continue
        if isinstance(node, (cst.If, cst.While)):
            found = node.test
        elif isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Assert):
            found = node.body[0].test
    return found if isinstance(found, cst.Comparison) and len(found.comparisons) == 1 else None


def branch_conditions(text: str, line: int) -> tuple[str, str] | None:
    """The condition of the ``if``/``elif``/``while`` (or ``assert``) on ``line`` as the user
    wrote it, and its negation (``conf > self.threshold``, ``conf <= self.threshold``): one
    comparison of two operands, with no call in it (a call such as ``.item()`` written again
    would be a new value, not the one the branch tested). None for anything else."""
    found, idx = _branch_comparison(text, line), index(text)
    if found is None or idx is None or _has_call(found):
        return None
    target = found.comparisons[0]
    op = target.operator
    if not isinstance(op, _FLIPPABLE):
        return None
    flipped = _NEGATED[type(op)](whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    negated = found.with_changes(comparisons=[target.with_changes(operator=flipped)])
    return idx.code(found), idx.code(negated)


def item_operand(text: str, line: int) -> str | None:
    """The operand of the branch on ``line`` that reads a tensor's value inline, as written
    (``probs.max().item()`` in ``if probs.max().item() > self.threshold:``): the name a
    value that no variable holds is given in messages. None unless exactly one."""
    idx = index(text)
    if idx is None:
        return None
    tests = [n.test for p, n in idx.statements if p.line == line and isinstance(n, (cst.If, cst.While))]
    if len(tests) == 1 and isinstance(tests[0], cst.Comparison) and len(tests[0].comparisons) == 1:
        operands = [tests[0].left, tests[0].comparisons[0].comparator]
        reads = [o for o in operands if reads_number(o)]
        return idx.code(reads[0]) if len(reads) == 1 else None
    # elsewhere: the one value the line reads (``best = int(y.argmax())``); in
    # ``int(n.sum().item())``, the read inside, which the ``int()`` only converts
    reads = [n for p, n in idx.expressions if p.line == line and _reads_value(n)]
    inner = [n for n in reads if not any(o is not n and _within(o, n) for o in reads)]
    return idx.code(inner[0]) if len(inner) == 1 else None


def _within(node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return any(c is node or _within(node, c) for c in outer.children)


def _reads_value(node: cst.CSTNode) -> bool:
    """``x.item()``, or ``int(x)`` / ``float(x)`` of one argument: one value read from a tensor."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "item"
    return isinstance(node.func, cst.Name) and node.func.value in ("int", "float") and len(node.args) == 1


@dataclass(frozen=True)
class TensorTest:
    """A statement that asks Python for a tensor's truth: ``if h.sum() > 0:``, ``assert (x >= 0).all()``."""

    keyword: str  # "if", "while", "assert", "torch._assert" or "bool()"
    test: str  # the condition as written
    message: str | None  # an assert's message, as written


def tensor_test(text: str, line: int) -> TensorTest | None:
    """The condition of the ``if``/``while``/``assert``/``torch._assert`` (or the one ``bool(...)``) on ``line``
    where it reads no value with ``.item()`` (so what Python converts to a bool is a
    tensor). None for anything else."""
    idx = index(text)
    if idx is None:
        return None
    for place, node in idx.statements:
        if place.line != line:
            continue
        if isinstance(node, (cst.If, cst.While)) and not reads_number(node.test):
            return TensorTest("while" if isinstance(node, cst.While) else "if", idx.code(node.test), None)
        small = node.body[0] if isinstance(node, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assert) and not reads_number(small.test):
            return TensorTest("assert", idx.code(small.test), idx.code(small.msg) if small.msg else None)
        call = small.value if isinstance(small, cst.Expr) else None
        if isinstance(call, cst.Call) and is_torch_assert(call) and not reads_number(call.args[0].value):
            message = idx.code(call.args[1].value) if len(call.args) > 1 else None
            return TensorTest("torch._assert", idx.code(call.args[0].value), message)
    calls = [n for p, n in idx.expressions if p.line == line and _is_bool_call(n)]
    if len(calls) == 1 and not reads_number(calls[0]):  # ``big = bool(y.max() > 0.99)``
        return TensorTest("bool()", idx.code(calls[0].args[0].value), None)
    return None


def is_torch_assert(call: cst.Call) -> bool:
    """``torch._assert(...)`` with its condition given first."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) == ("torch", "_assert")
        and bool(call.args)
        and call.args[0].keyword is None
    )


def _is_bool_call(node: cst.CSTNode) -> TypeGuard[cst.Call]:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "bool"
        and len(node.args) == 1
    )


def _reads_item(node: cst.CSTNode) -> bool:
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("item", "tolist")
    ):
        return True
    return any(_reads_item(c) for c in node.children)


_SIZES = ("numel", "size", "dim")


def reads_number(node: cst.CSTNode) -> bool:
    """Whether ``node`` reads a Python number: a value (``.item()``, ``.tolist()``) or a size
    (``.numel()``, ``.size(0)``, ``.shape[0]``, ``len(x)``); then a comparison of it is no tensor."""
    if _reads_item(node):
        return True
    if isinstance(node, cst.Call):
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value in _SIZES) or (
            isinstance(func, cst.Name) and func.value == "len"
        ):
            return True
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        return True
    return any(reads_number(c) for c in node.children)


def _has_call(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) or any(_has_call(c) for c in node.children)


def span_at(text: str, line: int, expression: str | None = None) -> Span:
    """Columns for a finding on ``line``: the expression if found, else the statement, else the line."""
    idx = index(text)
    lines = text.splitlines()
    if idx is not None:
        if expression:
            hit = idx.expression_on(line, expression)
            if hit:
                return hit
        stmt = idx.statement_at(line)
        if stmt is not None and stmt.span.line == line:
            return Span(line, stmt.span.column, line, len(lines[line - 1].rstrip()) + 1)
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    start = len(raw) - len(raw.lstrip()) + 1
    return Span(line, start, line, max(len(raw.rstrip()) + 1, start))


def visit_parsed(text: str, visitor: cst.CSTVisitor) -> cst.Module | None:
    """``text`` parsed and walked by ``visitor`` (which may ask for positions and parents): the
    module its nodes belong to; None where the text does not parse."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return None
    wrapper.visit(visitor)
    return wrapper.module


def replaced(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode) -> cst.Module:
    """``module`` with its node ``old`` replaced by ``new`` (libcst types the result as either,
    as the module itself could be the node replaced)."""
    out = module.deep_replace(old, new)
    assert isinstance(out, cst.Module)
    return out
