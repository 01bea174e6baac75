"""Rewrites of a data-dependent ``if`` that keep what the model computes (libcst, no torch).

Two kinds, tried before a ``torch._check`` (which drops one branch for good):

- branch-free: where one side does nothing the other does not already do, the test can
  go: an early exit (``if idx.numel() == 0: continue``) that the code after it handles
  anyway is dropped; a body whose other side is the identity (no ``else``, or ``return x``
  after it) always runs. Whether that keeps eager's results is for the proof to say
  (workers/proofs.py runs both on probe inputs). A fast path with no ``else`` that only
  assigns names (``if torch.all(mask == 1): mask = None``) may be dropped whole, test and body.
- ``torch.where``: an ``if``/``else`` whose sides assign the same names, each picked from
  both: ``inv = torch.where(seq_len > self.original_max, self.long_inv, self.short_inv)``.
- ``torch.cond``: both sides as local functions of the tensors they read (cond_branches.py).

Each function takes a file's text and the line of the ``if``, and returns the new text
(None where the statement has no such form; as_where also says the names it picks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from .at_line import replaced

EXITS = (cst.Continue, cst.Pass)


@dataclass(frozen=True)
class FoundIf:
    module: cst.Module
    branch: cst.If
    block: cst.IndentedBlock  # the block that holds it
    function: cst.FunctionDef | None

    @property
    def then(self) -> cst.IndentedBlock:
        """The ``if``'s own block (``find_if`` takes no one-line ``if``)."""
        assert isinstance(self.branch.body, cst.IndentedBlock)
        return self.branch.body


class _FindIf(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: tuple[cst.If, cst.CSTNode] | None = None

    def visit_If(self, node: cst.If) -> None:
        if self.get_metadata(PositionProvider, node).start.line == self.line and self.found is None:
            self.found = (node, self.get_metadata(ParentNodeProvider, node))


def find_if(text: str, line: int) -> FoundIf | None:
    """The plain ``if`` (no ``elif``) on ``line`` and the block it stands in."""
    try:
        wrapper = cst.MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return None
    finder = _FindIf(line)
    wrapper.visit(finder)
    if finder.found is None:
        return None
    branch, block = finder.found
    if (
        not isinstance(block, cst.IndentedBlock)
        or isinstance(branch.orelse, cst.If)
        or not isinstance(branch.body, cst.IndentedBlock)
    ):
        return None  # an ``elif`` is part of a chain; a one-line ``if x: y`` is left as written
    parents = wrapper.resolve(ParentNodeProvider)
    function = parents.get(block)
    return FoundIf(wrapper.module, branch, block, function if isinstance(function, cst.FunctionDef) else None)


def statements_of(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """A block's statements; a one-line suite's (``else: y = 1``) as the one line it is."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    assert isinstance(suite, cst.SimpleStatementSuite)  # libcst's only other suite
    return [cst.SimpleStatementLine(body=suite.body)]


def _leading(stmt: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return stmt.leading_lines if isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) else ()


def replaced_statements(found: FoundIf, start: int, end: int, new: Sequence[cst.BaseStatement]) -> str:
    """The module with ``block.body[start:end]`` replaced by ``new``."""
    body = list(found.block.body)
    if new and _leading(body[start]) and not _leading(new[0]):  # the comment or blank line above stays
        new = [new[0].with_changes(leading_lines=_leading(body[start])), *new[1:]]
    body[start:end] = new
    return replaced(found.module, found.block, found.block.with_changes(body=body)).code


def _returns_name(stmt: cst.BaseStatement) -> str | None:
    """``return x``: the name it returns unchanged."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return):
        value = stmt.body[0].value
        return value.value if isinstance(value, cst.Name) else None
    return None


def ends_in_return(statements: Sequence[cst.CSTNode]) -> bool:
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)


# -- branch-free -------------------------------------------------------------------


def without_branch(text: str, line: int) -> tuple[str, str] | None:
    """The ``if`` on ``line`` rewritten without its test, and how: ``(new text, "drop")`` for
    an early exit removed, ``(new text, "always")`` for a body that always runs, ``(new text,
    "early")`` for an early ``return x`` dropped, where the code after it may give ``x`` too."""
    found = find_if(text, line)
    if found is None or found.branch.orelse is not None:
        return None
    body = statements_of(found.branch.body)
    at = list(found.block.body).index(found.branch)
    if (
        len(body) == 1
        and isinstance(body[0], cst.SimpleStatementLine)
        and all(isinstance(s, EXITS) for s in body[0].body)
    ):
        return replaced_statements(found, at, at + 1, []), "drop"  # ``continue``: what follows handles the case
    rest = list(found.block.body)[at + 1 :]
    if not ends_in_return(body):
        return replaced_statements(found, at, at + 1, body), "always"  # the other side is "nothing happens"
    if len(rest) == 1 and _returns_name(rest[0]) is not None:
        return replaced_statements(found, at, at + 2, body), "always"  # the other side returns its input as it is
    if len(body) == 1 and _returns_name(body[0]) is not None and rest:  # ``if not mask.any(): return x``
        return replaced_statements(found, at, at + 1, []), "early"  # the code after may give ``x`` there too
    return None


def _has(node: cst.CSTNode, kinds: tuple[type, ...]) -> bool:
    return isinstance(node, kinds) or any(_has(c, kinds) for c in node.children)


# what a statement may hold for it to be dropped, or both its sides run: no call (its
# effects, if any, are not ours to see), no ``yield``, nothing assigned in passing
_NOT_DROPPED = (cst.Call, cst.Yield, cst.Await, cst.NamedExpr)


def _assigns_names_only(statements: Sequence[cst.BaseStatement]) -> list[tuple[str, cst.BaseExpression]] | None:
    """``a = ...`` statements of plain names, in order, as (name, value); None for anything else
    (``x += 1`` changes a tensor in place; ``self.cache = ...`` the module)."""
    out: list[tuple[str, cst.BaseExpression]] = []
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for small in stmt.body:
            if not isinstance(small, cst.Assign):
                return None
            names = [t.target for t in small.targets if isinstance(t.target, cst.Name)]
            if len(names) != len(small.targets):
                return None
            out += [(name.value, small.value) for name in names]
    return out


def without_fast_path(text: str, line: int) -> str | None:
    """The ``if`` on ``line`` dropped, body and test, where it has no ``else`` and its body only
    assigns names (``if torch.all(mask == 1): mask = None``): a fast path whose other side, the
    code after it, may compute the same (multiplying by a mask of ones changes nothing)."""
    found = find_if(text, line)
    if found is None or found.branch.orelse is not None or len(found.block.body) < 2:
        return None
    body = statements_of(found.branch.body)
    if (
        not _assigns_names_only(body)
        or _has(found.branch.test, (cst.NamedExpr,))
        or any(_has(s, _NOT_DROPPED) for s in body)
    ):
        return None
    at = list(found.block.body).index(found.branch)
    return replaced_statements(found, at, at + 1, [])


# -- torch.where -------------------------------------------------------------------


def _picked(found: FoundIf, orelse: cst.Else) -> list[tuple[str, cst.BaseExpression, cst.BaseExpression]] | None:
    """(name, its value on the true side, on the false side) where each side only assigns the
    same names once each, to values ``torch.where`` can pick between (not ``None``, a string,
    a container); where there are several, no value and not the test reads any of them (one
    ``torch.where`` after another would see the new values)."""
    sides = [_assigns_names_only(statements_of(found.branch.body)), _assigns_names_only(statements_of(orelse.body))]
    if not sides[0] or not sides[1]:
        return None
    true, false = dict(sides[0]), dict(sides[1])
    if len(true) != len(sides[0]) or len(false) != len(sides[1]) or set(true) != set(false):
        return None
    values = [*true.values(), *false.values()]
    if any(_number(true[n]) and _number(false[n]) for n in true):
        return None  # two numbers: eager gives a number, torch.where a tensor
    if any(_has(v, (cst.Yield, cst.Await, cst.NamedExpr, cst.Lambda)) or not _tensor_like(v) for v in values):
        return None
    if len(true) > 1 and set(true) & set(names_of([found.branch.test, *values]).read):
        return None
    return [(name, true[name], false[name]) for name in true]


def _tensor_like(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    return not isinstance(value, (cst.BaseString, cst.Tuple, cst.List, cst.Dict, cst.Set, cst.BaseComp))


def _number(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.UnaryOperation):
        return _number(value.expression)
    return isinstance(value, cst.BaseNumber)


def as_where(text: str, line: int) -> tuple[str, tuple[str, ...]] | None:
    """The ``if``/``else`` on ``line`` whose sides assign the same names, as one
    ``name = torch.where(test, true_value, false_value)`` for each: both values are computed,
    and the test (a tensor: the caller makes sure) picks, element by element. Returns the new
    text and the names."""
    found = find_if(text, line)
    if (
        found is None
        or not isinstance(found.branch.orelse, cst.Else)
        or not isinstance(found.branch.orelse.body, cst.IndentedBlock)
    ):
        return None
    picked = _picked(found, found.branch.orelse)
    if picked is None:
        return None
    code = found.module.code_for_node
    test = code(found.branch.test)
    new = [cst.parse_statement(f"{name} = torch.where({test}, {code(a)}, {code(b)})\n") for name, a, b in picked]
    at = list(found.block.body).index(found.branch)
    return replaced_statements(found, at, at + 1, new), tuple(name for name, _, _ in picked)


# -- torch.cond --------------------------------------------------------------------


class _Names(cst.CSTVisitor):
    """Names a piece of code reads and assigns (not inside functions it defines)."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.assigned: list[str] = []
        self.other = False  # an attribute or item assigned, a return, break, yield...

    def visit_Name(self, node: cst.Name) -> None:
        self.read.append(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        else:
            self.other = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Break, cst.Continue, cst.Yield, cst.Global, cst.Nonlocal, cst.Del)):
            self.other = True
        return super().on_visit(node)


def names_of(nodes: Sequence[cst.CSTNode]) -> _Names:
    names = _Names()
    for node in nodes:
        node.visit(names)
    return names
