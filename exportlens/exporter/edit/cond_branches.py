"""A data-dependent ``if`` as ``torch.cond`` (libcst, no torch): both sides as local functions
of the tensors they read, called with the same test:
``return torch.cond(routed > 0, true_fn, false_fn, (x, scores))``. What torch.cond refuses is
written away: a number read out of a one-element tensor (``t.item() > 0`` decides on ``t > 0``)
and a side whose output is its input or a view of it (``.clone()``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from .branch_rewrites import FoundIf, ends_in_return, find_if, names_of, replaced_statements, statements_of


def _returns(statements: Sequence[cst.CSTNode]) -> int:
    count = 0

    class Count(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            nonlocal count
            count += 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    for stmt in statements:
        stmt.visit(Count())
    return count


def _sets_none(statements: Sequence[cst.BaseStatement], outputs: Sequence[str]) -> bool:
    """Whether one of ``statements`` assigns ``None`` to one of ``outputs``."""
    return any(
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value == "None"
        and any(isinstance(t.target, cst.Name) and t.target.value in outputs for t in small.targets)
        for stmt in statements
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
    )


# methods whose result shares its input's storage: a side returning one aliases an operand
_VIEWS = frozenset({"view", "view_as", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "expand", "t"})


def _aliases(value: cst.BaseExpression, operands: Sequence[str], assigned: set[str]) -> bool:
    """Whether ``value`` is an operand the side leaves as it is, or a view of one
    (``hidden[:, 0]``, ``x.transpose(0, 1)``)."""
    if isinstance(value, cst.Subscript):
        value = value.value
    elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _VIEWS:
        value = value.func.value
    return isinstance(value, cst.Name) and value.value in operands and value.value not in assigned


def _clone_operands(statements: Sequence[cst.BaseStatement], operands: Sequence[str]) -> list[cst.BaseStatement]:
    """A final ``return x`` (or ``return x, y``) of operands the side leaves as they are, or of
    views of them, with ``.clone()``: torch.cond refuses a branch whose output aliases its input."""
    last = statements[-1] if statements else None
    if not isinstance(last, cst.SimpleStatementLine) or not isinstance(last.body[-1], cst.Return):
        return list(statements)
    value = last.body[-1].value
    if value is None:  # a bare ``return``
        return list(statements)
    items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    assigned = set(names_of(statements[:-1]).assigned)
    if not any(_aliases(v, operands, assigned) for v in items):
        return list(statements)
    code = cst.Module([]).code_for_node
    said = [f"{code(v)}.clone()" if _aliases(v, operands, assigned) else code(v) for v in items]
    new = cst.parse_expression(", ".join(said) if len(said) > 1 else said[0])
    return [*statements[:-1], last.with_changes(body=[*last.body[:-1], last.body[-1].with_changes(value=new)])]


def _function(name: str, operands: Sequence[str], statements: Sequence[cst.BaseStatement]) -> cst.FunctionDef:
    header = cst.parse_statement(f"def {name}({', '.join(operands)}):\n    pass\n")
    assert isinstance(header, cst.FunctionDef)
    return header.with_changes(body=cst.IndentedBlock(body=_clone_operands(statements, operands)))


def _fresh(name: str, taken: set[str]) -> str:
    out, n = name, 1
    while out in taken:
        n += 1
        out = f"{name}_{n}"
    return out


@dataclass(frozen=True)
class _Sides:
    true: list[cst.BaseStatement]
    false: list[cst.BaseStatement]
    end: int  # where the statements the call replaces end in the block
    outputs: list[str]  # what the call assigns; none where it is returned


def _sides(found: FoundIf, tensors: frozenset[str]) -> _Sides | None:
    """The two sides of the ``if`` as the bodies of torch.cond's functions: two ``return``s
    (``if c: return a`` then ``return b``), or the tensors both sides assign, returned."""
    branch, block = found.branch, list(found.block.body)
    body, orelse = statements_of(branch.body), statements_of(branch.orelse.body) if branch.orelse else []
    at = block.index(branch)
    rest = block[at + 1 :]
    if found.function is not None and found.block is found.function.body and ends_in_return(body):
        other = orelse or rest
        if not ends_in_return(other) or _returns(body) != 1 or _returns(other) != 1 or (orelse and rest):
            return None
        return _Sides(body, other, len(block), [])
    assigned = list(dict.fromkeys(names_of(body).assigned + names_of(orelse).assigned))
    both = set(names_of(body).assigned) & set(names_of(orelse).assigned)
    outputs = [n for n in assigned if n in tensors or n in both]
    if not outputs or _returns(body) or _returns(orelse) or (not orelse and any(n not in tensors for n in assigned)):
        return None
    if _sets_none(body, outputs) or _sets_none(orelse, outputs):
        return None  # a side's output must be a tensor: ``mask = None`` cannot be one
    result = cst.parse_statement(f"return {', '.join(outputs)}\n")
    return _Sides(body + [result], orelse + [result], at + 1, outputs)


class _TensorTest(cst.CSTTransformer):
    """``t.item() > 0`` as ``t > 0``: torch.cond decides on the one-element tensor itself,
    where the number read out of it would be data-dependent again."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        read = isinstance(func, cst.Attribute) and func.attr.value == "item" and not updated.args
        return func.value if read and isinstance(func, cst.Attribute) else updated


def as_cond(text: str, line: int, tensors: frozenset[str]) -> str | None:
    """The ``if`` on ``line`` as ``torch.cond`` over its two sides, each a local function of
    the tensors it reads (``tensors``: the names that hold tensors on that line when forward
    runs; anything else they read, ``self`` included, they see as closures)."""
    found = find_if(text, line)
    if found is None or found.function is None:
        return None
    sides = _sides(found, tensors)
    if sides is None or names_of(sides.true).other or names_of(sides.false).other:
        return None
    read = names_of(sides.true).read + names_of(sides.false).read
    operands = [n for n in dict.fromkeys(read + sides.outputs) if n in tensors and n != "self"]
    own = names_of(statements_of(found.function.body))
    taken = set(own.read) | set(own.assigned)
    true_fn, false_fn = _fresh("true_fn", taken), _fresh("false_fn", taken)
    tested = found.branch.test.visit(_TensorTest())
    assert isinstance(tested, cst.BaseExpression)  # _TensorTest only shortens a call
    test = found.module.code_for_node(tested)
    call = f"torch.cond({test}, {true_fn}, {false_fn}, ({', '.join(operands)}{',' if len(operands) == 1 else ''}))"
    last = f"{', '.join(sides.outputs)} = {call}" if sides.outputs else f"return {call}"
    apart = {
        "leading_lines": [cst.EmptyLine(indent=False)]
    }  # a blank line between the functions and the call, as people write them
    new = [
        _function(true_fn, operands, sides.true),
        _function(false_fn, operands, sides.false).with_changes(**apart),
        cst.parse_statement(last + "\n").with_changes(**apart),
    ]
    at = list(found.block.body).index(found.branch)
    above = list(found.branch.leading_lines)
    if at > 0 and not (above and above[0].comment is None):  # PEP 8: a blank line before a nested def
        new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *above])
    return replaced_statements(found, at, sides.end, new)
