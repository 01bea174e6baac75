"""Text edits on the user's files that keep their layout (tomlkit, libcst; no torch).

Each function takes a file's text and returns the new text; ``edit_between``
turns old/new into the one minimal Edit a client applies.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import libcst as cst
import libcst.metadata
import tomlkit
from tomlkit.items import InlineTable, String, Table

from ..core.report import Edit
from ..core.targets import Span, Target
from ..spec.shapes import looks_like_shape, parse_shape
from .at_line import index


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def edit_between(path: str, old: str, new: str) -> Edit | None:
    """The single smallest replacement that turns ``old`` into ``new``."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    line, column = _position(old, start)
    end_line, end_column = _position(old, end_old)
    return Edit(path, line, column, end_line, end_column, new[start:end_new])


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply edits on one file (positions refer to the original text)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, column: int) -> int:
        return starts[min(line, len(starts)) - 1] + column - 1

    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        text = text[: offset(e.line, e.column)] + e.new_text + text[offset(e.end_line, e.end_column) :]
    return text


# -- pyproject.toml -------------------------------------------------------------


def _module_table(doc: tomlkit.TOMLDocument, target: str, inherit: tuple[str, ...] = ()) -> Any:
    """The table of ``target``; for a variant (``path.py:Class[name]``) its own, first given
    the class table's entries of ``inherit`` that it does not override, so that an edit of
    them changes this variant alone and keeps what it inherited."""
    t = Target.parse(target)
    modules = doc["tool"]["exportlens"]["modules"]  # type: ignore[index]
    if t.variant is None:
        return modules[target]
    base = modules[t.module]
    table = next(v for v in base["variants"] if v.get("name") == t.variant)
    for key in inherit:
        if isinstance(base.get(key), dict):
            merged = tomlkit.inline_table()
            merged.update({**base[key].unwrap(), **(table[key].unwrap() if key in table else {})})
            table[key] = merged
    return table


def edit_spec(text: str, target: str, change: Callable[[Any], None], inherit: tuple[str, ...] = ()) -> str:
    doc = tomlkit.parse(text)
    change(_module_table(doc, target, inherit))
    return tomlkit.dumps(doc)


def set_dim_bounds(text: str, target: str, name: str, **bounds: int | None) -> str:
    """``dims.<name>.min/max = ...`` (None removes a bound), keeping the table's style."""

    def change(table: Any) -> None:
        if "dims" not in table:
            table["dims"] = tomlkit.inline_table()
        dims = table["dims"]
        if name not in dims:
            dims[name] = tomlkit.inline_table()
        dim = dims[name]
        for key, value in bounds.items():
            if value is None:
                dim.pop(key, None)
            else:
                dim[key] = value
        example = dim.get("example")
        if example is not None and not ((dim.get("min") or 0) <= example <= dim.get("max", example)):
            dim.pop("example")

    return edit_spec(text, target, change, inherit=("dims",))


def substitute_dim(text: str, target: str, name: str, replacement: str) -> str:
    """Write ``replacement`` (a size, another dim, or ``dx + 1``) wherever shapes say ``name``,
    and drop ``name`` from the dims table: it is no longer a dim of its own."""

    def rewrite(shape: str) -> str:
        parse_shape(shape)  # only rewrite what parses
        head, _, body = shape.partition("[")
        parts = body.rsplit("]", 1)[0].split(",")
        return f"{head}[{','.join(_substituted(p, name, replacement) for p in parts)}]"

    def walk(value: Any) -> None:
        items = (
            value.items()
            if isinstance(value, (dict, InlineTable, Table))
            else enumerate(value)
            if isinstance(value, list)
            else ()
        )
        for key, item in list(items):
            if isinstance(item, (str, String)) and looks_like_shape(str(item)):
                value[key] = rewrite(str(item))
            elif isinstance(item, (dict, InlineTable, Table, list)):
                walk(item)

    def change(table: Any) -> None:
        walk(table.get("inputs", {}))
        if "dims" in table and name in table["dims"]:
            carried = _carried(table["dims"][name], replacement, table["dims"])
            del table["dims"][name]
            if carried is not None:  # name = 4*new: new gets name's range, in its own terms
                table["dims"][carried[0]] = carried[1]
            if not table["dims"]:
                del table["dims"]

    return tidied(text, edit_spec(text, target, change, inherit=("inputs", "dims")))


def tidied(old: str, new: str) -> str:
    """The lines an edit changed, in the file's style of inline tables: without the doubled
    space tomlkit leaves where it removed a table's first key (``{  seq = ...``), and, where
    the file writes ``{ min = 2 }``, a table tomlkit made (``{example = 7}``) spaced alike."""
    before, spaced = set(old.splitlines()), "} }" in old or "{ " in old

    def tidy(line: str) -> str:
        line = re.sub(r"\{ {2,}", "{ ", line)
        if spaced:
            line = re.sub(r"\{(?=[^\s}])", "{ ", line)
            line = re.sub(r"(?<=[^\s{])\}", " }", line)
        return line

    return "".join(line if line.rstrip("\n") in before else tidy(line) for line in new.splitlines(keepends=True))


def _substituted(part: str, name: str, replacement: str) -> str:
    """One size of a shape string with ``name`` replaced; a size left with no name is
    written as the number it is (``2*h`` with h = 64: ``128``)."""
    if re.fullmatch(r"\s*\w+\s*", part):  # the dim alone: its replacement as it is
        return re.sub(rf"\b{re.escape(name)}\b", replacement, part)
    simple = re.fullmatch(r"\s*\w+\s*", replacement) is not None
    new = re.sub(rf"\b{re.escape(name)}\b", replacement if simple else f"({replacement})", part)
    import sympy  # (a shape holds no arithmetic of numbers, nor parentheses: ``2*_n - 2``)

    lead = new[: len(new) - len(new.lstrip())]
    if not re.search(r"[A-Za-z_]", new):
        return f"{lead}{int(sympy.sympify(new))}"
    if simple:
        return new
    return f"{lead}{_linear_size(sympy.expand(sympy.sympify(new.strip())))}"


def _linear_size(expr: Any) -> str:
    """``a*name + b`` as a shape writes it (``2*_n - 2``, ``_n + 1``, ``_n``)."""
    (sym,) = expr.free_symbols
    a, b = (int(c) for c in expr.as_poly(sym).all_coeffs())
    head = f"{a}*{sym}" if a != 1 else str(sym)
    return head if b == 0 else f"{head} {'+' if b > 0 else '-'} {abs(b)}"


_LINEAR = re.compile(r"^\s*(?:(\d+)\s*\*\s*)?([A-Za-z_]\w*)\s*(?:([+-])\s*(\d+))?\s*$")


def _carried(old: Any, replacement: str, dims: Any) -> tuple[str, Any] | None:
    """For ``name = a*new + b`` with ``new`` a dim not yet declared: ``new``'s entry, with the
    bounds and example of ``name``'s that it implies (``batch <= 64``, ``batch = 4*nb``:
    ``nb <= 16``). None when there is nothing to carry."""
    m = _LINEAR.match(replacement)
    if m is None or m[2] in dims or not hasattr(old, "get"):
        return None
    a, new = int(m[1] or 1), m[2]
    b = (int(m[4]) if m[3] == "+" else -int(m[4])) if m[4] else 0
    bounds = {}
    if old.get("min") is not None:
        bounds["min"] = -((b - int(old["min"])) // a)  # the ceiling of (min - b) / a
    if old.get("max") is not None:
        bounds["max"] = (int(old["max"]) - b) // a
    example = old.get("example")
    if example is not None and (int(example) - b) % a == 0:
        bounds["example"] = (int(example) - b) // a
    if not bounds:
        return None
    # written as the tables users write: { max = 16 }
    return new, tomlkit.parse("x = { " + ", ".join(f"{k} = {v}" for k, v in bounds.items()) + " }")["x"]


# -- Python ---------------------------------------------------------------------


def insert_check(text: str, line: int, condition: str) -> str | None:
    """``torch._check(condition)`` on its own line before the statement at ``line``,
    adding ``import torch`` when the file has none."""
    idx = index(text)
    stmt = idx.statement_at(line) if idx else None
    if stmt is None:
        return None
    lines = text.splitlines(keepends=True)
    lines.insert(stmt.span.line - 1, f"{stmt.indent}torch._check({condition})\n")
    new = "".join(lines)
    return new if _imports_torch(idx.module) else _add_import_torch(new)


def assert_async(text: str, line: int, test: str, message: str | None) -> str | None:
    """The ``assert`` on ``line`` as ``torch._assert_async(test, message)``: the same check,
    made by the exported program when it runs instead of by Python while tracing."""
    idx = index(text)
    found = [
        n.body[0]
        for p, n in (idx.statements if idx else ())
        if p.line == line and isinstance(n, cst.SimpleStatementLine)
    ]
    if not found or not isinstance(found[0], cst.Assert):
        return None
    args = f"{test}, {message}" if message else test
    call = cst.Expr(cst.parse_expression(f"torch._assert_async({args})"))
    new = idx.module.deep_replace(found[0], call).code  # the line's comment and the rest stay as written
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
        module = module.deep_replace(call, replacement)
    return module.code


def _new_root_call(module: cst.Module, old: cst.Call, value: str) -> tuple[str, str] | None:
    """``Dim("_seq", ...)`` for the new dim of ``seq = 8*_seq``, with the bounds of the old
    call that it implies (as ``_carried`` does in a pyproject table)."""
    bounds = {}
    for arg in old.args[1:]:
        if arg.keyword and arg.keyword.value in ("min", "max") and isinstance(arg.value, cst.Integer):
            bounds[arg.keyword.value] = arg.value.evaluated_value
    carried = _carried(bounds, value, {})
    if carried is None and _LINEAR.match(value) is None:
        return None
    name = _LINEAR.match(value)[2]
    keys = "".join(f", {k}={v}" for k, v in (carried[1].items() if carried else ()) if k in ("min", "max"))
    func = module.code_for_node(old.func)
    return name, f'{func}("{name}"{keys})'


def _dim_name(module: cst.Module, call: cst.Call) -> str | None:
    func = module.code_for_node(call.func)
    first = call.args[0].value if call.args else None
    if (func == "Dim" or func.endswith(".Dim")) and isinstance(first, cst.SimpleString):
        return first.evaluated_value
    return None


# -- a size the code hard-codes ------------------------------------------------------

SHAPE_CALLS = frozenset({"view", "reshape", "expand", "unflatten", "new_zeros", "new_ones", "new_empty", "new_full"})


def replace_size_literal(text: str, line: int, value: int, replacement: str) -> str | None:
    """``text`` with the one integer ``value`` written as a size on ``line`` (an argument of
    ``.view``/``.reshape``/``.expand``... or inside a tuple or list given to one) replaced
    by ``replacement``; None unless exactly one such literal is there."""
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
    lines[place.line - 1] = row[: place.column - 1] + replacement + row[place.end_column - 1 :]
    return "".join(lines)


class _SizeLiterals(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, value: int, line: int) -> None:
        self.value, self.line = value, line
        self.found: list[Span] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in SHAPE_CALLS):
            return
        for arg in node.args:
            items = (
                [e.value for e in arg.value.elements] if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg.value]
            )
            for item in items:
                if isinstance(item, cst.Integer) and item.evaluated_value == self.value:
                    pos = self.get_metadata(cst.metadata.PositionProvider, item)
                    if pos.start.line == self.line:
                        self.found.append(Span(pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1))
