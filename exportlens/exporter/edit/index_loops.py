"""A loop over the indices a mask selects, written as a loop over every index of the mask
(libcst, no torch): ``hit = mask.nonzero()`` then ``for e in hit:`` as ``hit = mask`` then
``for e in range(hit.shape[0]):``. How many indices ``nonzero()`` finds is only known when the
model runs, so the export cannot unroll the loop; the mask's own length is a size it knows.
An index the mask leaves out must add nothing (an expert no token is routed to gets an empty
index, and ``index_add_`` adds nothing): the fix's probes check it, as for any branch-free form."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from .at_line import visit_parsed


@dataclass(frozen=True)
class IndexLoop:
    mask: str  # ``F.one_hot(chosen, 4).sum(dim=(0, 1)).gt(0)``, as written
    written: str  # ``for e in hit:``
    rewritten: str  # ``for e in range(hit.shape[0]):``
    text: str  # the file with the loop (and the name it iterates) rewritten


def every_index(text: str, line: int) -> IndexLoop | None:
    """The file with the ``for`` on ``line`` over ``X.nonzero()`` (or over a name bound only to
    that, and used nowhere else) looping over every index of ``X``; None for any other line."""
    finder = _Loops(line)
    parsed = visit_parsed(text, finder)
    if parsed is None:
        return None
    if finder.loop is None or finder.function is None:
        return None
    loop, module = finder.loop, parsed
    if (mask := _nonzero_of(loop.iter)) is not None:  # ``for e in X.nonzero():``
        changes: dict[cst.CSTNode, cst.CSTNode] = {loop.iter: _every(mask)}
    elif isinstance(loop.iter, cst.Name) and (bound := _bound_once(finder.function, loop.iter.value)) is not None:
        assign, mask = bound  # ``hit = X.nonzero()`` … ``for e in hit:``
        changes = {assign.value: mask, loop.iter: _every(loop.iter)}
    else:
        return None
    new = module.visit(_Replace(changes))
    header = module.code_for_node(loop).splitlines()[0]
    rewritten = f"for {module.code_for_node(loop.target)} in {module.code_for_node(changes[loop.iter])}:"
    return IndexLoop(module.code_for_node(mask), header.rstrip(), rewritten, new.code)


class _Loops(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int) -> None:
        self.line = line
        self.loop: cst.For | None = None
        self.function: cst.FunctionDef | None = None

    def visit_For(self, node: cst.For) -> None:
        if self.loop is not None or self.get_metadata(PositionProvider, node).start.line != self.line:
            return
        if not isinstance(node.target, cst.Name) or node.orelse is not None:
            return
        self.loop = node
        parent: cst.CSTNode | None = self.get_metadata(ParentNodeProvider, node)
        while parent is not None and not isinstance(parent, cst.FunctionDef):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        self.function = parent


def _nonzero_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` of ``X.nonzero()`` (no arguments); None for anything else."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute):
        return node.func.value if node.func.attr.value == "nonzero" else None
    return None


def _bound_once(function: cst.FunctionDef, name: str) -> tuple[cst.Assign, cst.BaseExpression] | None:
    """The one ``name = X.nonzero()`` of ``function`` and its ``X``, where ``name`` is read only by
    the loop (its one other use): rebinding it to the mask changes nothing else."""
    uses = _Uses(name)
    function.visit(uses)
    assigns = [a for a in uses.assigns if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)]
    if len(assigns) != 1 or len(uses.assigns) != 1 or uses.names != 2:
        return None
    mask = _nonzero_of(assigns[0].value)
    return (assigns[0], mask) if mask is not None else None


class _Uses(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.names = 0
        self.assigns: list[cst.Assign] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names += node.value == self.name

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Name) and t.target.value == self.name for t in node.targets):
            self.assigns.append(node)


def _every(mask: cst.BaseExpression) -> cst.Call:
    """``range(mask.shape[0])``."""
    shape = cst.Subscript(cst.Attribute(mask, cst.Name("shape")), [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    return cst.Call(cst.Name("range"), [cst.Arg(shape)])


class _Replace(cst.CSTTransformer):
    def __init__(self, changes: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self.changes = changes

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.changes.get(original_node, updated_node)
