"""A first export spec for a module that has none (libcst, tomlkit; no torch).

Read from the code: constructor arguments with literal defaults become ``init``;
each tensor parameter of ``forward`` gets a shape, sized from the first layer that
consumes it where that can be told (``nn.Linear(in, out)`` -> ``[batch, in]``,
``nn.Conv2d(c, ...)`` -> ``[batch, c, 32, 32]``, ``nn.Embedding(n, d)`` -> token ids
in ``[0, n)``), else a guess marked for the user to check.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import tomlkit

from ..core.report import Edit
from ..core.targets import ModuleClass
from .edits import edit_between
from .spec import PYPROJECT

# first-layer classes -> the input shape they imply, given their first argument
_LAYERS = {
    "Linear": lambda n: f"f32[batch, {n}]",
    "LazyLinear": lambda n: "f32[batch, 16]",
    "Conv1d": lambda n: f"f32[batch, {n}, 64]",
    "Conv2d": lambda n: f"f32[batch, {n}, 32, 32]",
    "Conv3d": lambda n: f"f32[batch, {n}, 8, 16, 16]",
    "LayerNorm": lambda n: f"f32[batch, seq, {n}]",
    "BatchNorm1d": lambda n: f"f32[batch, {n}]",
    "BatchNorm2d": lambda n: f"f32[batch, {n}, 32, 32]",
    "MultiheadAttention": lambda n: f"f32[batch, seq, {n}]",
    "LSTM": lambda n: f"f32[batch, seq, {n}]",
    "GRU": lambda n: f"f32[batch, seq, {n}]",
}


def _literal(node: cst.BaseExpression | None) -> Any:
    """The value of a literal expression, or None."""
    if node is None:
        return None
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = _literal(node.expression)
        return -v if isinstance(v, (int, float)) else None
    return None


def _find_class(tree: cst.Module, name: str) -> cst.ClassDef | None:
    for stmt in tree.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == name:
            return stmt
    return None


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _init_values(init: cst.FunctionDef | None) -> tuple[dict[str, Any], list[str]]:
    """Constructor keyword arguments with literal defaults, and those the user must fill."""
    if init is None:
        return {}, []
    values: dict[str, Any] = {}
    missing: list[str] = []
    for p in [*init.params.params[1:], *init.params.kwonly_params]:
        value = _literal(p.default)
        if value is not None:
            values[p.name.value] = value
        elif p.default is None:
            missing.append(p.name.value)
    return values, missing


class _Layers(cst.CSTVisitor):
    """``self.name = nn.Layer(first_arg, ...)`` assignments, in order."""

    def __init__(self) -> None:
        self.layers: dict[str, tuple[str, cst.BaseExpression | None]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target
        call = node.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return
        if isinstance(call, cst.Call):
            func = call.func
            kind = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            first = call.args[0].value if call.args and call.args[0].keyword is None else None
            if kind == "Sequential" and first is not None and isinstance(first, cst.Call):  # its first layer
                inner = first.func
                kind = inner.attr.value if isinstance(inner, cst.Attribute) else inner.value if isinstance(inner, cst.Name) else ""
                first = first.args[0].value if first.args and first.args[0].keyword is None else None
            self.layers.setdefault(target.attr.value, (kind, first))


class _Uses(cst.CSTVisitor):
    """Which ``self.layer(...)`` first receives each forward parameter."""

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.first: dict[str, str] = {}

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
            for arg in node.args[:1]:
                if isinstance(arg.value, cst.Name) and arg.value.value in self.params:
                    self.first.setdefault(arg.value.value, f.attr.value)


def _size(expr: cst.BaseExpression | None, init: dict[str, Any]) -> int | None:
    value = _literal(expr)
    if isinstance(value, int):
        return value
    if isinstance(expr, cst.Name) and isinstance(init.get(expr.value), int):
        return init[expr.value]
    if (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
        and isinstance(init.get(expr.attr.value), int)
    ):
        return init[expr.attr.value]
    return None


def scaffold_table(module: ModuleClass, source: str) -> tomlkit.items.Table:
    """The ``[tool.exportlens.modules."path.py:Class"]`` table for ``module``."""
    tree = cst.parse_module(source)
    cls = _find_class(tree, module.name)
    init_values, missing = _init_values(_method(cls, "__init__") if cls else None)
    params = [p for p in (module.forward.params if module.forward else ()) if p.kind in ("positional", "positional_only", "keyword_only")]
    layers, uses = _Layers(), _Uses({p.name for p in params})
    for method, visitor in (("__init__", layers), ("forward", uses)):
        node = _method(cls, method) if cls is not None else None
        if node is not None:
            node.visit(visitor)

    table = tomlkit.table()
    if init_values or missing:
        table["init"] = _inline(init_values)
        if missing:
            table["init"].comment(f"TODO: also pass {', '.join(missing)}")
    inputs, guessed, dims = _inputs(params, layers, uses, init_values)
    table["inputs"] = inputs
    if guessed:
        table["inputs"].comment(f"TODO: check the shape of {', '.join(guessed)}")
    table["dims"] = _inline({name: _inline({"min": 1, "max": 64} if name == "batch" else {"min": 2, "max": 512}) for name in sorted(dims)})
    return table


def _inputs(params: list, layers: _Layers, uses: _Uses, init_values: dict) -> tuple[tomlkit.items.InlineTable, list[str], set[str]]:
    """Each tensor parameter's shape, from the first layer that consumes it; the names
    guessed (no layer told), and the dims used."""
    inputs = tomlkit.inline_table()
    guessed, dims = [], {"batch"}
    for p in params:
        if p.has_default and not _is_tensor(p.annotation):
            continue  # an optional non-tensor argument keeps its default
        layer = layers.layers.get(uses.first.get(p.name, ""))
        size = _size(layer[1], init_values) if layer else None
        if layer and layer[0] == "Embedding" and size:
            inputs[p.name] = _inline({"shape": "i64[batch, seq]", "low": 0, "high": size})
            dims.add("seq")
        elif layer and layer[0] in _LAYERS and size:
            inputs[p.name] = shape = _LAYERS[layer[0]](size)
            dims.update(d for d in ("seq",) if d in shape)
        else:
            inputs[p.name] = "f32[batch, 16]"
            guessed.append(p.name)
    return inputs, guessed, dims


def _is_tensor(annotation: str | None) -> bool:
    return bool(annotation) and "Tensor" in annotation


def _inline(values: dict[str, Any]) -> tomlkit.items.InlineTable:
    t = tomlkit.inline_table()
    t.update(values)
    return t


def spec_edit(module: ModuleClass, source: str, pyproject: str | None) -> Edit:
    """The edit that adds ``module``'s spec to pyproject.toml (``pyproject`` None: a new file)."""
    doc = tomlkit.parse(pyproject or "")
    tool = doc.setdefault("tool", tomlkit.table(is_super_table=True))
    section = tool.setdefault("exportlens", tomlkit.table(is_super_table=True))
    modules = section.setdefault("modules", tomlkit.table(is_super_table=True))
    modules[module.target] = scaffold_table(module, source)
    new = tomlkit.dumps(doc)
    edit = edit_between(PYPROJECT, pyproject or "", new)
    assert edit is not None
    return edit
