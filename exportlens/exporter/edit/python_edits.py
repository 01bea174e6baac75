"""Edits of the user's Python that keep its layout (libcst; no torch): a ``torch._check`` or
``torch._assert_async`` inserted on a line, ``import torch`` where it is missing, a ``Dim(...)``
call's bounds, a size literal replaced by the expression it stands for."""

from __future__ import annotations

import re

import libcst as cst
import libcst.metadata

from ..core.targets import Span
from .at_line import index, replaced
from .spec_tables import LINEAR_SIZE, carried_bounds


def insert_torch_check(text: str, line: int, condition: str) -> str | None:
    """``torch._check(condition)`` on its own line before the statement at ``line``,
    adding ``import torch`` when the file has none."""
    idx = index(text)
    stmt = idx.statement_at(line) if idx else None
    if idx is None or stmt is None:
        return None
    lines = text.splitlines(keepends=True)
    lines.insert(stmt.span.line - 1, f"{stmt.indent}torch._check({condition})\n")
    new = "".join(lines)
    return new if _imports_torch(idx.module) else _add_import_torch(new)


def assert_async(text: str, line: int, test: str, message: str | None) -> str | None:
    """The ``assert`` on ``line`` as ``torch._assert_async(test, message)``: the same check,
    made by the exported program when it runs instead of by Python while tracing."""
    idx = index(text)
    if idx is None:
        return None
    found = [n.body[0] for p, n in idx.statements if p.line == line and isinstance(n, cst.SimpleStatementLine)]
    if not found or not isinstance(found[0], cst.Assert):
        return None
    args = f"{test}, {message}" if message else test
    call = cst.Expr(cst.parse_expression(f"torch._assert_async({args})"))
    new = replaced(idx.module, found[0], call).code  # the line's comment and the rest stay as written
    return new if _imports_torch(idx.module) else _add_import_torch(new)


def importing_torch(text: str) -> str:
    """``text`` with ``import torch`` added where the file has none."""
    return text if _imports_torch(cst.parse_module(text)) else _add_import_torch(text)


def _imports_torch(module: cst.Module) -> bool:
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import) and any(
                a.asname is None and module.code_for_node(a.name) == "torch" for a in small.names
            ):
                return True
    return False


def _add_import_torch(text: str) -> str:
    """Put ``import torch`` before the file's first import (after a docstring / __future__)."""
    module = cst.parse_module(text)
    at = 0
    for i, stmt in enumerate(module.body):
        small = getattr(stmt, "body", ())
        first = small[0] if isinstance(small, (list, tuple)) and small else None
        is_doc = isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString)
        is_future = (
            isinstance(first, cst.ImportFrom) and module.code_for_node(first.module or cst.Name("")) == "__future__"
        )
        if is_doc or is_future:
            at = i + 1
            continue
        break
    body = list(module.body)
    body.insert(at, cst.parse_statement("import torch\n"))
    return module.with_changes(body=body).code


def set_dim_call(text: str, name: str, **bounds: int | None) -> str | None:
    """Rewrite ``Dim("name", ...)`` in user code with new min/max keywords."""
    module = cst.parse_module(text)

    class Rewrite(cst.CSTTransformer):
        changed = False

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            func = module.code_for_node(original.func)
            if not (func == "Dim" or func.endswith(".Dim")) or not original.args:
                return updated
            first = original.args[0].value
            if not (isinstance(first, cst.SimpleString) and first.evaluated_value == name):
                return updated
            keep = [a for a in updated.args if not (a.keyword and a.keyword.value in bounds)]
            for key, value in bounds.items():
                if value is not None:
                    keep.append(
                        cst.Arg(
                            keyword=cst.Name(key),
                            value=cst.Integer(str(value)),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                        )
                    )
            keep = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keep]
            Rewrite.changed = True
            return updated.with_changes(args=keep)

    new = module.visit(Rewrite())
    return new.code if Rewrite.changed else None


def substitute_dim_call(text: str, name: str, value: str) -> str | None:
    """``Dim("b", ...)`` in user code replaced by ``value`` over the other dims' own calls:
    ``b = a`` writes ``Dim("a", max=64)`` there, as ``a`` is written (torch takes two Dims of
    one name and the same bounds as one dim), ``b = 2*a`` writes ``2 * Dim("a", max=64)``.
    None when a dim of ``value`` has no ``Dim(...)`` call to copy."""
    module = cst.parse_module(text)
    calls: dict[str, list[cst.Call]] = {}

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            dim = _dim_name(module, node)
            if dim is not None:
                calls.setdefault(dim, []).append(node)

    module.visit(Find())
    if name not in calls:
        return None
    written = {r: module.code_for_node(calls[r][0]) for r in set(re.findall(r"[A-Za-z_]\w*", value)) if r in calls}
    if len(written) < len(set(re.findall(r"[A-Za-z_]\w*", value))):
        new_root = _new_root_call(module, calls[name][0], value)  # ``seq = 8*_seq``: _seq is new
        if new_root is None:
            return None
        written[new_root[0]] = new_root[1]
    code = re.sub(r"[A-Za-z_]\w*", lambda m: written[m.group(0)], value)
    replacement = cst.parse_expression(code)
    for call in calls[name]:
        module = replaced(module, call, replacement)
    return module.code


def _new_root_call(module: cst.Module, old: cst.Call, value: str) -> tuple[str, str] | None:
    """``Dim("_seq", ...)`` for the new dim of ``seq = 8*_seq``, with the bounds of the old
    call that it implies (as ``carried_bounds`` does in a pyproject table)."""
    bounds = {}
    for arg in old.args[1:]:
        if arg.keyword and arg.keyword.value in ("min", "max") and isinstance(arg.value, cst.Integer):
            bounds[arg.keyword.value] = arg.value.evaluated_value
    kept = carried_bounds(bounds, value, {})
    linear = LINEAR_SIZE.match(value)
    if linear is None:  # (carried_bounds keeps bounds only of a linear size)
        return None
    name = linear[2]
    keys = "".join(f", {k}={v}" for k, v in (kept[1].items() if kept else ()) if k in ("min", "max"))
    func = module.code_for_node(old.func)
    return name, f'{func}("{name}"{keys})'


def _dim_name(module: cst.Module, call: cst.Call) -> str | None:
    func = module.code_for_node(call.func)
    first = call.args[0].value if call.args else None
    if (func == "Dim" or func.endswith(".Dim")) and isinstance(first, cst.SimpleString):
        name = first.evaluated_value
        return name if isinstance(name, str) else None  # (a bytes literal names no dim)
    return None


SHAPE_CALLS = frozenset({"view", "reshape", "expand", "unflatten", "new_zeros", "new_ones", "new_empty", "new_full"})


def replace_size_literal(text: str, line: int, value: int, replacement: str) -> str | None:
    """``text`` with the one integer ``value`` written as a size on ``line`` (an argument of
    ``.view``/``.reshape``/``.expand``... or inside a tuple or list given to one, or the end
    of a slice from the start, ``self.pos[:, :200]``) replaced by ``replacement``; None
    unless exactly one such literal is there."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    wrapper = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True)
    finder = _SizeLiterals(value, line)
    wrapper.visit(finder)
    if len(finder.found) != 1:
        return None
    (place,) = finder.found
    lines = text.splitlines(keepends=True)
    row = lines[place.line - 1]
    lines[place.line - 1] = row[: place.column - 1] + replacement + row[(place.end_column or place.column) - 1 :]
    return "".join(lines)


class _SizeLiterals(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, value: int, line: int) -> None:
        self.value, self.line = value, line
        self.found: list[Span] = []

    def visit_Slice(self, node: cst.Slice) -> None:
        # ``self.pos[:, :200]``: a table cut at the example's length, where the input's length belongs
        if node.lower is None and node.step is None and isinstance(node.upper, cst.Integer):
            self._found(node.upper)

    def _found(self, item: cst.Integer) -> None:
        if item.evaluated_value == self.value:
            pos = self.get_metadata(cst.metadata.PositionProvider, item)
            if pos.start.line == self.line:
                self.found.append(Span(pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in SHAPE_CALLS):
            return
        for arg in node.args:
            items = (
                [e.value for e in arg.value.elements] if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg.value]
            )
            for item in items:
                if isinstance(item, cst.Integer):
                    self._found(item)
