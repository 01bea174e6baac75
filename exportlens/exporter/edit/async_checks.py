"""Checks of a tensor's values kept in the exported program (libcst, no torch).

``if not torch.isfinite(y).all(): raise ValueError("...")`` and ``torch._assert(cond, "...")``
ask Python for a tensor's truth while tracing, which export cannot give. ``torch._assert_async``
makes the same check when the exported program runs (it raises RuntimeError with the message):

    torch._assert_async(torch.isfinite(y).all(), "...")

Each function takes a file's text and the line of the statement, and returns the new text
(None where the statement has no such form).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from .at_line import index, is_torch_assert, replaced
from .branch_rewrites import find_if
from .python_edits import importing_torch


@dataclass(frozen=True)
class KeptCheck:
    text: str  # the file with the check rewritten
    error: str  # what the code raised where the check failed (``ValueError``)


def raise_as_assert(text: str, line: int) -> KeptCheck | None:
    """The ``if`` on ``line`` whose whole body is ``raise SomeError("message")`` (no ``else``)
    as ``torch._assert_async(<the test negated>, "message")``. Not for a test that Python
    itself asks for a bool (``a or b``, ``a < b < c``), nor a message formatted from values."""
    found = find_if(text, line)
    if found is None or found.branch.orelse is not None:
        return None
    raised = _raised(found.then.body)
    holds = _negated(found.module, found.branch.test)
    if raised is None or holds is None:
        return None
    error, message = raised
    said = message or '"' + error + '"'  # ``raise ValueError``: the error's name is the message
    call = cst.parse_expression(f"torch._assert_async({holds}, {said})")
    check = cst.SimpleStatementLine(
        body=[cst.Expr(call)],
        leading_lines=found.branch.leading_lines,
        trailing_whitespace=found.then.header,  # the ``if`` line's comment stays on the line
    )
    return KeptCheck(importing_torch(replaced(found.module, found.branch, check).code), error)


def _raised(body: Sequence[cst.BaseStatement]) -> tuple[str, str | None] | None:
    """``raise ValueError("message")``, the one statement of ``body``: the error's name and its
    message as written (None for ``raise ValueError`` or ``ValueError()``)."""
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    stmt = body[0].body[0]
    exc = stmt.exc if isinstance(stmt, cst.Raise) else None
    func = exc.func if isinstance(exc, cst.Call) else exc
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return None
    error = cst.Module([]).code_for_node(func)
    args = exc.args if isinstance(exc, cst.Call) else ()
    if not args:
        return error, None
    if len(args) != 1 or args[0].keyword is not None or not _plain_string(args[0].value):
        return None  # a message formatted from values would be formatted once, while tracing
    return error, cst.Module([]).code_for_node(args[0].value)


def _plain_string(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.ConcatenatedString):
        return _plain_string(node.left) and _plain_string(node.right)
    return isinstance(node, cst.SimpleString)


def _negated(module: cst.Module, test: cst.BaseExpression) -> str | None:
    """The condition under which ``if test: raise`` does not raise: ``not c`` -> ``c``,
    anything else ``c`` -> ``torch.logical_not(c)`` (any dtype, as Python's truth)."""
    inner = test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) else None
    if _asks_bool(inner if inner is not None else test):
        return None
    if inner is not None:
        return module.code_for_node(inner.with_changes(lpar=[], rpar=[]) if _atom(inner) else inner)
    return f"torch.logical_not({module.code_for_node(test.with_changes(lpar=[], rpar=[]))})"


def _asks_bool(node: cst.BaseExpression) -> bool:
    """Python converts to bool inside it: ``a and b``, ``not a``, ``a < b < c``."""
    if isinstance(node, (cst.BooleanOperation, cst.IfExp)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    return isinstance(node, cst.Comparison) and len(node.comparisons) > 1


def _atom(node: cst.BaseExpression) -> bool:
    """Whether ``node`` keeps its meaning without its parentheses as an argument."""
    return not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.NamedExpr))


def torch_assert_as_async(text: str, line: int) -> str | None:
    """``torch._assert(cond, "message")`` on ``line`` (a statement of its own) as
    ``torch._assert_async(cond, "message")``; every other byte as written."""
    idx = index(text)
    for place, node in idx.statements if idx else ():
        call = _torch_assert(node) if place.line == line else None
        if idx is not None and call is not None:
            func = call.func.with_changes(attr=cst.Name("_assert_async"))
            return replaced(idx.module, call.func, func).code
    return None


def _torch_assert(node: cst.CSTNode) -> cst.Call | None:
    small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
    call = small.value if isinstance(small, cst.Expr) else None
    if not isinstance(call, cst.Call) or not is_torch_assert(call):
        return None
    return call
