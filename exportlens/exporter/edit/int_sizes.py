"""``int()`` of a scaled size, found as written and rewritten in integer arithmetic (libcst, no torch).

torch.export keeps ``x.shape[2] * 3 // 2`` symbolic, but not ``int(x.shape[2] * 1.5)``: a
float made from a size and turned back into an int is one number to it, the example's.
Where the scale is a float literal that is an exact small fraction p/q (1.5, 0.25, 2.0:
binary fractions, so ``n * f`` is computed exactly), ``int(n * f)`` is ``n * p // q`` for
every size n >= 0; any other literal (0.1 is not 1/10 in binary) is left alone. Likewise
``int(h / k)`` is ``h // k`` for a size h and a positive int k (``divided_ints``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import libcst as cst
from libcst.metadata import CodeRange, ParentNodeProvider, PositionProvider

from .at_line import visit_parsed

MAX_DENOMINATOR = 1024  # a scale of more binary digits is no "small fraction"
# where an expression needs no parentheses: a statement's or an argument's whole value
_WHOLE = (cst.Assign, cst.AnnAssign, cst.Arg, cst.Return, cst.Element, cst.Comparison, cst.ComparisonTarget)


@dataclass(frozen=True)
class ScaledInt:
    """``int(x.shape[2] * 1.5)`` on a line: as written, its integer form, and the file so rewritten."""

    written: str  # "int(x.shape[2] * 1.5)"
    rewritten: str  # "x.shape[2] * 3 // 2"
    text: str  # the whole file with the call rewritten; every other byte as it was


def scaled_int(text: str, line: int) -> ScaledInt | None:
    """The first ``int(<size> * <float literal>)`` that starts on ``line``; None where there is
    none, the file does not parse, or the literal is not an exact small fraction."""
    finder = _Finder(line)
    module = visit_parsed(text, finder)
    if module is None or finder.found is None:
        return None
    call, size, scale = finder.found
    rewritten = _integer_form(module.code_for_node(size), scale)
    if not isinstance(finder.parents.get(call), _WHOLE):
        rewritten = f"({rewritten})"
    where = finder.positions[call]
    start, end = _offset(text, where.start.line, where.start.column), _offset(text, where.end.line, where.end.column)
    return ScaledInt(module.code_for_node(call), rewritten, text[:start] + rewritten + text[end:])


def exact_fraction(literal: str) -> Fraction | None:
    """``1.5`` -> 3/2: the literal's value where the float it makes is exactly that (a small
    binary fraction); None for ``0.1`` (not 1/10 as a float), zero, or a large denominator."""
    try:
        written, stored = Fraction(literal.replace("_", "")), Fraction(float(literal.replace("_", "")))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if written != stored or written <= 0 or written.denominator > MAX_DENOMINATOR:
        return None
    return written


def _integer_form(size: str, scale: Fraction) -> str:
    p, q = scale.numerator, scale.denominator
    return size + (f" * {p}" if p != 1 else "") + (f" // {q}" if q != 1 else "")


def _offset(text: str, line: int, column: int) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(ln) for ln in lines[: line - 1]) + column


def _sizelike(node: cst.BaseExpression) -> bool:
    """A size the model reads, never negative: ``x.shape[2]``, ``x.size(2)``, ``len(x)``, ``x.numel()``."""
    if isinstance(node, cst.Subscript):
        return isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "len" and len(node.args) == 1
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in ("size", "numel")
        and (func.attr.value == "numel") != bool(node.args)
    )


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: tuple[cst.Call, cst.BaseExpression, Fraction] | None = None
        self.positions: dict[cst.CSTNode, CodeRange] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if (
            self.found is not None
            or not (isinstance(node.func, cst.Name) and node.func.value == "int")
            or len(node.args) != 1
        ):
            return
        where = self.get_metadata(PositionProvider, node)
        product = node.args[0].value
        if where.start.line != self.line or node.args[0].keyword or not isinstance(product, cst.BinaryOperation):
            return
        if not isinstance(product.operator, cst.Multiply):
            return
        for size, scale in ((product.left, product.right), (product.right, product.left)):
            if (
                isinstance(scale, cst.Float)
                and _sizelike(size)
                and (fraction := exact_fraction(scale.value)) is not None
            ):
                self.found = (node, size, fraction)
                self.positions[node] = where
                self.parents[node] = self.get_metadata(ParentNodeProvider, node)
                return


def divided_ints(text: str, line: int) -> ScaledInt | None:
    """Every ``int(a / b)`` that starts on ``line`` written ``a // b``: the same number where
    ``a >= 0`` and ``b`` is a positive int (a size halved by a module's factor), which the
    fix's proof checks on its probes. ``written``/``rewritten``: each call, joined by ``"`, `"``."""
    finder = _Divisions(line)
    module = visit_parsed(text, finder)
    if module is None or not finder.found:
        return None
    out, written, rewritten = text, list[str](), list[str]()
    for call, a, b in reversed(finder.found):  # from the end, so earlier offsets hold
        new = f"{module.code_for_node(a)} // {module.code_for_node(b)}"
        new = new if isinstance(finder.parents[call], _WHOLE) else f"({new})"
        where = finder.positions[call]
        start, end = (
            _offset(text, where.start.line, where.start.column),
            _offset(text, where.end.line, where.end.column),
        )
        out = out[:start] + new + out[end:]
        written.insert(0, module.code_for_node(call))
        rewritten.insert(0, new)
    return ScaledInt("`, `".join(written), "`, `".join(rewritten), out)


class _Divisions(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: list[tuple[cst.Call, cst.BaseExpression, cst.BaseExpression]] = []
        self.positions: dict[cst.CSTNode, CodeRange] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "int") or len(node.args) != 1:
            return
        where = self.get_metadata(PositionProvider, node)
        quotient = node.args[0].value
        if where.start.line != self.line or node.args[0].keyword or not isinstance(quotient, cst.BinaryOperation):
            return
        if not isinstance(quotient.operator, cst.Divide) or isinstance(quotient.right, cst.Float):
            return
        self.found.append((node, _operand(quotient.left), _operand(quotient.right)))
        self.positions[node] = where
        self.parents[node] = self.get_metadata(ParentNodeProvider, node)


def _operand(node: cst.BaseExpression) -> cst.BaseExpression:
    """An operand of ``//`` as it is safe to write: a sum or product kept in parentheses."""
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node
