"""A successful export, described in the user's names (torch side).

The program keeps no Dim names (``s77``): each placeholder's symbolic shape is
matched against the spec's name for that input axis to name the symbols back.
"""

from __future__ import annotations

from collections.abc import Callable
from re import Match
from typing import Any

import sympy
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from ...core.equality import Equality
from ...core.report import LineShapes, Range, Summary
from ...spec.shapes import DTYPES
from ..compat import messages as forms
from ..compat.internals import pytree
from ..context import Context
from ..locate import GuardLog, deepest_in_text
from ..reading.unbacked import unbacked_names
from .guard_record import guard_record
from .symbols import SYMBOL, pretty

SHORT = {getattr(torch, long): short for short, long in DTYPES.items() if short != "b8"}


def summarize(ep: ExportedProgram, ctx: Context, log: GuardLog, artifact: str | None) -> Summary:
    paths = ctx.built.paths()
    placeholders = _user_placeholders(ep)
    names = _symbol_names(placeholders, paths, ctx) | unbacked_names(ep, ctx)
    inputs = tuple(f"{path}: {_input(node.meta.get('val'), names)}" for path, node in zip(paths, placeholders))
    outputs = tuple(describe(v, names) for v in _output_values(ep))
    signature = f"({', '.join(inputs)}) -> " + (outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})")
    return Summary(
        signature=signature,
        inputs=inputs,
        outputs=outputs,
        range_constraints=_ranges(ep, names),
        equalities=_equalities(placeholders, paths, names, ctx),
        line_shapes=_line_shapes(ep, ctx, names),
        graph=_rename(
            ep.graph_module.print_readable(print_output=False, include_stride=False, include_device=False), names
        ),
        artifact=artifact,
        guards=guard_record(ep, ctx, log, names),
        ops=operators(ep),
    )


def operators(ep: ExportedProgram) -> tuple[str, ...]:
    """The operators the program calls, its branches' and loops' bodies included, sorted:
    torch's (``aten.nonzero``, ``aten.add.Tensor``: the overload where it is not the default)
    and higher-order ones (``higher_order.cond``); Python's arithmetic on sizes is no operator."""
    out = set()
    for module in ep.graph_module.modules():
        for node in module.graph.nodes if isinstance(module, torch.fx.GraphModule) else ():
            name = getattr(node.target, "name", None)  # (an operator's, public; Python's functions have none)
            if node.op == "call_function" and callable(name):
                said = str(name())  # "aten::add.Tensor", "aten::relu" (the default overload), "cond"
                out.add(said.replace("::", ".") if "::" in said else f"higher_order.{said}")
    return tuple(sorted(out))


def in_user_names(ep: ExportedProgram, ctx: Context) -> Callable[[str], str]:
    """What the program raises, said in the user's names: its runtime assertion ("Runtime
    assertion failed for expression u2 <= 2 on node 'le_11'") as the check and the line
    it comes from, its guards' input sizes (``x.size()[0]``) as the dims declared for them."""
    placeholders = _user_placeholders(ep)
    names = _symbol_names(placeholders, ctx.built.paths(), ctx) | unbacked_names(ep, ctx)
    by_name = {str(s): pretty(e) for s, e in names.items()}
    nodes = {n.name: n for n in ep.graph.nodes}

    def assertion(m: Match) -> str:
        expr = _said(m[1], names) or SYMBOL.sub(lambda s: by_name.get(s[1], s[1]), m[1])
        frame = deepest_in_text(ctx.sources, nodes[m[2]].meta.get("stack_trace")) if m[2] in nodes else None
        where = f" (from {ctx.sources.rel(frame.filename)}:{frame.line})" if frame else ""
        return f"its check `{expr}` fails{where}"

    def size(m: Match) -> str:
        name = ctx.built.names.by_input.get(m[1], {}).get(int(m[2]))
        return (name if name.isidentifier() else f"({name})") if name else m[0]

    def said(text: str) -> str:
        return forms.INPUT_SIZE.sub(size, forms.ASSERTION.sub(assertion, text))

    return said


def _said(text: str, names: dict[sympy.Symbol, sympy.Expr]) -> str:
    """torch's printed expression (``Eq(Mod(((u0//2)) + 1, 2), 0)``) read back and said as
    Python over the user's names; "" where sympy cannot read it."""
    symbols = {s: sympy.Symbol(s, integer=True) for s in SYMBOL.findall(text)}
    try:
        expr = sympy.sympify(text, locals=symbols)
    except (sympy.SympifyError, SyntaxError, TypeError):
        return ""
    return pretty(expr, {symbols[str(s)]: pretty(e) for s, e in names.items() if str(s) in symbols})


def _user_placeholders(ep: ExportedProgram) -> list[torch.fx.Node]:
    user = {
        s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT and hasattr(s.arg, "name")
    }
    return [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in user]


def _symbol_names(placeholders: list[torch.fx.Node], paths: list[str], ctx: Context) -> dict[sympy.Symbol, sympy.Expr]:
    """Symbol -> expression in the user's Dim names."""
    names: dict[sympy.Symbol, sympy.Expr] = {}
    derived: list[tuple[sympy.Expr, str]] = []
    for path, node in zip(paths, placeholders):
        val = node.meta.get("val")
        labels = ctx.built.names.by_input.get(path, {})
        if isinstance(val, torch.SymInt) and path in ctx.built.names.ints and isinstance(val.node.expr, sympy.Symbol):
            names.setdefault(val.node.expr, sympy.Symbol(ctx.built.names.ints[path]))  # an int input: "int[pos]"
        if not isinstance(val, torch.Tensor):
            continue
        for axis, size in enumerate(val.shape):
            label = labels.get(axis)
            if label is None or not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            if isinstance(expr, sympy.Symbol) and label.isidentifier():
                names.setdefault(expr, sympy.Symbol(label))
            else:
                derived.append((expr, label))
    for expr, label in derived:  # the root only appears derived: solve for its symbol
        free = [s for s in expr.free_symbols if s not in names]
        if len(free) == 1:
            solution = sympy.solve(sympy.Eq(expr, sympy.sympify(label)), free[0])
            if solution:
                names[free[0]] = solution[0]
    return names | {s: e for s, e in _axis_names(placeholders, paths).items() if s not in names}


def _axis_names(placeholders: list[torch.fx.Node], paths: list[str]) -> dict[sympy.Symbol, sympy.Expr]:
    """A size the spec left open (``?``) named as the code reads it (``y.shape[1]``), as the
    guard record names it: never torch's own symbol (``s27``)."""
    out: dict[sympy.Symbol, sympy.Expr] = {}
    for path, node in zip(paths, placeholders):
        val = node.meta.get("val")
        for axis, size in enumerate(val.shape if isinstance(val, torch.Tensor) else ()):
            if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol):
                out.setdefault(size.node.expr, sympy.Symbol(f"{path}.shape[{axis}]"))
    return out


def describe(val: Any, names: dict[sympy.Symbol, sympy.Expr]) -> str:
    if isinstance(val, torch.Tensor):
        sizes = ", ".join(_size(s, names) for s in val.shape)
        return f"{SHORT.get(val.dtype, str(val.dtype).replace('torch.', ''))}[{sizes}]"
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):  # a Python number, as its value
        return f"{_SCALAR[type(val)]} = {_size(val, names)}"
    if isinstance(val, (list, tuple)):
        return "(" + ", ".join(describe(v, names) for v in val) + ")"
    return repr(val)


_SCALAR = {torch.SymInt: "int", torch.SymFloat: "float", torch.SymBool: "bool"}


def _input(val: Any, names: dict[sympy.Symbol, sympy.Expr]) -> str:
    """An input as the spec writes it: a dynamic int is ``int[pos]`` (a value is ``int = ...``)."""
    if isinstance(val, torch.SymInt) and isinstance(val.node.expr, sympy.Symbol):
        return f"int[{_size(val, names)}]"
    return describe(val, names)


def _size(s: Any, names: dict[sympy.Symbol, sympy.Expr]) -> str:
    if isinstance(s, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return pretty(s.node.expr.xreplace(names))
    return str(s)


def _output_values(ep: ExportedProgram) -> list[Any]:
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    values = [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in pytree.tree_leaves(out_node.args[0])]
    user = [s for s in ep.graph_signature.output_specs if s.kind.name == "USER_OUTPUT"]
    return values[len(values) - len(user) :] if user else values


def _bound(v: Any) -> int | None:
    """A range's end as a number; None where it is unbounded (``int_oo``, ``-int_oo``)."""
    return None if str(v).lstrip("-") in ("int_oo", "oo") else int(v)


def _ranges(ep: ExportedProgram, names: dict[sympy.Symbol, sympy.Expr]) -> tuple[Range, ...]:
    out = []
    for sym, vr in ep.range_constraints.items():
        try:
            out.append(Range(pretty(sym.xreplace(names)), _bound(vr.lower), _bound(vr.upper)))
        except (TypeError, ValueError):  # (an end that is no integer: no dim's range)
            continue
    return tuple(out)


def _equalities(placeholders: list[torch.fx.Node], paths: list[str], names: dict, ctx: Context) -> tuple[Equality, ...]:
    """Sizes torch tied to a named dim that the spec left open (``?``) or named otherwise."""
    out: list[Equality] = []
    for path, node in zip(paths, placeholders):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        labels = ctx.built.names.by_input.get(path, {})
        for axis, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr.xreplace(names)
            said, left = pretty(expr), f"{path}.shape[{axis}]"
            if said == left:  # a size left open, and still its own
                continue
            if labels.get(axis, "").replace(" ", "") != said.replace(" ", "") and not SYMBOL.fullmatch(said):
                out.append(Equality(left, said, tuple(sorted(str(s) for s in expr.free_symbols))))
    return tuple(out)


def _line_shapes(ep: ExportedProgram, ctx: Context, names: dict) -> tuple[LineShapes, ...]:
    by_line: dict[tuple[str, int], list[str]] = {}
    checks = _assertion_nodes(ep)
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.meta.get("val") is None or node in checks:
            continue  # torch._check's asserts (and what they compute) are no shape of the line
        frame = deepest_in_text(ctx.sources, node.meta.get("stack_trace"))
        if frame is None:
            continue
        key = (ctx.sources.rel(frame.filename), frame.line)
        shape = describe(node.meta["val"], names)
        shapes = by_line.setdefault(key, [])
        if not shapes or shapes[-1] != shape:
            shapes.append(shape)
    return tuple(LineShapes(path, line, tuple(shapes)) for (path, line), shapes in sorted(by_line.items()))


def _assertion_nodes(ep: ExportedProgram) -> set[torch.fx.Node]:
    """The nodes that only compute runtime assertions (``u0 % 4 == 0``, asserted). A value
    read from a tensor's data (``.item()``) is the user's number even where only checks use
    it: its line says ``int``, not the ``i64[]`` it was read from."""
    out: set[torch.fx.Node] = set()
    for node in reversed(ep.graph.nodes):
        asserts = "assert" in str(node.target) or isinstance(node.meta.get("val"), torch.SymBool)
        if asserts or (
            node.users
            and all(u in out for u in node.users)
            and not isinstance(node.meta.get("val"), torch.Tensor)
            and str(node.target) not in _VALUE_READS
        ):
            out.add(node)
    return out


_VALUE_READS = {"aten.item.default", "aten._local_scalar_dense.default"}


def _rename(text: str, names: dict[sympy.Symbol, sympy.Expr]) -> str:
    by_name = {str(s): pretty(e) for s, e in names.items()}
    return SYMBOL.sub(lambda m: by_name.get(m.group(1), m.group(1)), text)
