"""What a module's own code says about how it is called (libcst; no torch).

Read once per class for the scaffold (scaffold.py): the constructor's literal defaults
and the sizes its attributes compute from them (``self.head_dim = dim // n_heads``),
the layers it builds (``self.proj = nn.Linear(dim, 4 * dim)``), and, in ``forward``,
for each parameter: the names a ``.shape`` unpacking gives its axes (its rank), the
sizes a ``.view``/``.reshape`` of it ends in, and the first layer applied to it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst

from .configs import Read, guess_required

_OPS = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Power: operator.pow,
}


def literal(node: cst.BaseExpression | None) -> Any:
    """The value of a literal expression, or None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = literal(node.expression)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return None


@dataclass(frozen=True)
class Layer:
    kind: str  # "Linear", "Conv2d", a project class's name
    first: int | None  # its first argument (or the keyword that names the input size), where known
    written: str  # as the user wrote the call, for the spec's comment


@dataclass
class Use:
    """What ``forward`` does with one parameter."""

    axes: tuple[str, ...] | None = None  # ``b, t, d = x.shape``: ("b", "t", "d")
    last: int | None = None  # ``x.view(-1, 64)``: the size it ends in
    layer: str | None = None  # the first ``self.<layer>(x ...)``


@dataclass
class Reading:
    init: dict[str, Any] = field(default_factory=dict)  # constructor keywords with literal defaults
    missing: list[str] = field(default_factory=list)  # constructor parameters with no default
    sizes: dict[str, Any] = field(
        default_factory=dict
    )  # names and ``self.`` attributes -> values, as __init__ computes them
    layers: dict[str, Layer] = field(default_factory=dict)  # self attribute -> the layer built there
    uses: dict[str, Use] = field(default_factory=dict)  # forward parameter -> its use
    notes: list[str] = field(default_factory=list)  # what init guessed or scaled for the constructor
    weight: int | None = None  # ``self.weight = nn.Parameter(torch.ones(dim))``: a norm's features
    caches: dict[str, tuple[tuple[int, ...], str]] = field(default_factory=dict)  # name -> shape, as allocated
    # name -> each axis's size where it resolves (None where not), as allocated: a cache's length
    allocated: dict[str, tuple[tuple[int | None, ...], str]] = field(default_factory=dict)


# the keyword that names a layer's input size, where it is not the first argument
_SIZE_KEYWORDS = (
    "in_features",
    "in_channels",
    "num_embeddings",
    "normalized_shape",
    "embed_dim",
    "input_size",
    "num_features",
)


def _call_name(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _self_attr(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


class _Init(cst.CSTVisitor):
    """``__init__``'s assignments: sizes it computes, layers it builds, in order."""

    def __init__(self, reading: Reading) -> None:
        self.r = reading

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assign(target.target, node.value)

    def _assign(self, target: cst.BaseExpression, node_value: cst.BaseExpression) -> None:
        pairs = _pairs(target, node_value)
        if pairs is not None:  # ``self.a, self.b = a, b // 2``: each its own
            for one, value in pairs:
                self._assign(one, value)
            return
        name = _self_attr(target) or (target.value if isinstance(target, cst.Name) else None)
        if name is not None:
            value = evaluate(node_value, self.r.sizes)
            if value is not None:
                self.r.sizes.setdefault(name, value)
            if name == "weight" and isinstance(value := _parameter_size(node_value, self.r.sizes), int):
                self.r.weight = value
            if _self_attr(target) and isinstance(node_value, cst.Call):
                layer = self._layer(node_value)
                if layer is not None:
                    self.r.layers.setdefault(name, layer)

    def _layer(self, call: cst.Call) -> Layer | None:
        kind = _call_name(call.func)
        if kind in ("Sequential", "ModuleList") and call.args and isinstance(call.args[0].value, cst.Call):
            return self._layer(call.args[0].value)  # its first layer takes the input
        if not kind:
            return None
        first = next((a.value for a in call.args if a.keyword is None), None)
        keyed = next((a.value for a in call.args if a.keyword and a.keyword.value in _SIZE_KEYWORDS), None)
        size = evaluate(first if first is not None else keyed, self.r.sizes)
        return Layer(
            kind,
            size if isinstance(size, int) and not isinstance(size, bool) else None,
            cst.Module([]).code_for_node(call),
        )


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[Any, Any]] | None:
    """``a, b = x, y``: each target with its value; None where it is not such an assignment."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    if len(target.elements) != len(value.elements) or any(
        isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)
    ):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]


class _Allocations(cst.CSTVisitor):
    """Anywhere in the file, ``k_cache = torch.zeros(max_batch, max_seq, ...)`` and
    ``register_buffer("cache_k", torch.zeros(...))``: a cache's shape, by the name it is kept under."""

    def __init__(self, reading: Reading) -> None:
        self.r = reading
        self.tuples: dict[str, list[cst.BaseExpression]] = {}  # ``shape = (b, s, h, d)``: a shape named first

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target
        name = _self_attr(target) or (target.value if isinstance(target, cst.Name) else None)
        if isinstance(target, cst.Name) and isinstance(node.value, (cst.Tuple, cst.List)):
            self.tuples[target.value] = [e.value for e in node.value.elements]
        if name:
            self._found(name, node.value, node)

    def visit_Call(self, node: cst.Call) -> None:
        if _call_name(node.func) == "register_buffer" and len(node.args) >= 2:
            name = literal(node.args[0].value)
            if isinstance(name, str):
                self._found(name, node.args[1].value, node)

    def _found(self, name: str, value: cst.BaseExpression, where: cst.CSTNode) -> None:
        if "cache" not in name.lower() or not isinstance(value, cst.Call):
            return
        kind = _call_name(value.func)
        if kind not in ("zeros", "empty", "ones", "full") or not value.args:
            return
        first = value.args[0].value
        if isinstance(first, (cst.Tuple, cst.List)):  # torch.zeros((b, s, h, d)), torch.full((b, s), 0.0)
            nodes = [e.value for e in first.elements]
        elif isinstance(first, cst.Name) and first.value in self.tuples:  # torch.zeros(shape)
            nodes = self.tuples[first.value]
        elif kind == "full":
            return
        else:  # torch.zeros(b, s, h, d)
            nodes = [a.value for a in value.args if a.keyword is None]
        sizes = tuple(
            s if isinstance(s := self._size(n), int) and not isinstance(s, bool) and s > 0 else None for n in nodes
        )
        written = cst.Module([]).code_for_node(where)
        if len(sizes) >= 2:
            self.r.allocated.setdefault(name, (sizes, written))
        if len(sizes) >= 2 and None not in sizes:
            self.r.caches.setdefault(name, (cast(tuple[int, ...], sizes), written))

    def _size(self, node: cst.BaseExpression) -> Any:
        """An axis's size; ``args.max_seq_len`` in another class's ``__init__`` by the config's field."""
        value = evaluate(node, self.r.sizes)
        if value is None and isinstance(node, cst.Attribute) and _self_attr(node) is None:
            value = self.r.sizes.get(node.attr.value)
        return value


def _parameter_size(node: cst.BaseExpression, sizes: dict[str, Any]) -> int | None:
    """``n`` for ``nn.Parameter(torch.ones(n))``: a 1-d weight, the size of the last axis it scales."""
    if not (isinstance(node, cst.Call) and _call_name(node.func) == "Parameter" and len(node.args) >= 1):
        return None
    inner = node.args[0].value
    if not (isinstance(inner, cst.Call) and _call_name(inner.func) in ("ones", "zeros", "empty", "randn")):
        return None
    size = evaluate(inner.args[0].value, sizes) if len(inner.args) == 1 else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def evaluate(node: cst.BaseExpression | None, sizes: dict[str, Any]) -> Any:
    """``dim // n_heads``, ``self.dim``, ``4``: its value from literals and ``sizes``; else None."""
    if node is None:
        return None
    value = literal(node)
    if value is not None:
        return value
    if isinstance(node, cst.Name):
        return sizes.get(node.value)
    attr = _self_attr(node)
    if attr is not None and attr in sizes:
        return sizes[attr]
    if isinstance(node, cst.Attribute):  # ``config.n_embd``, ``self.config.n_embd``: a config's field
        dotted = cst.Module([]).code_for_node(node)
        return sizes.get(dotted.removeprefix("self."))
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _OPS:
        left, right = evaluate(node.left, sizes), evaluate(node.right, sizes)
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and not (right == 0 and isinstance(node.operator, cst.FloorDivide))
        ):
            return _OPS[type(node.operator)](left, right)
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:  # LayerNorm([64]): its last size
        return evaluate(node.elements[-1].value, sizes)
    return None


class _Forward(cst.CSTVisitor):
    """Per parameter: its ``.shape`` unpacking, the size a view of it ends in, its first layer."""

    def __init__(self, reading: Reading) -> None:
        self.r = reading
        self.aliases: dict[str, str] = {}  # ``tokens = x.reshape(-1, d)``: tokens -> x

    def _param(self, name: str | None) -> str | None:
        name = self.aliases.get(name, name) if name else None
        return name if name in self.r.uses else None

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target
        reshaped = self._param(_root_name(node.value)) if isinstance(node.value, cst.Call) else None
        if isinstance(target, cst.Name) and reshaped and target.value not in self.r.uses:
            self.aliases[target.value] = reshaped
        shape_of = _shape_of(node.value)
        if isinstance(target, (cst.Tuple, cst.List)) and shape_of in self.r.uses:
            names = tuple(e.value.value if isinstance(e.value, cst.Name) else "_" for e in target.elements)
            if self.r.uses[shape_of].axes is None and not any(
                isinstance(e, cst.StarredElement) for e in target.elements
            ):
                self.r.uses[shape_of].axes = names

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        layer = _self_attr(func)
        if layer is not None and node.args:
            name = self._param(_root_name(node.args[0].value))
            if name and self.r.uses[name].layer is None:
                self.r.uses[name].layer = layer
        if isinstance(func, cst.Attribute) and func.attr.value in ("view", "reshape") and node.args:
            name = self._param(_root_name(func.value))
            last = evaluate(node.args[-1].value, self.r.sizes)
            if name and isinstance(last, int) and last > 0 and self.r.uses[name].last is None:
                self.r.uses[name].last = last


def _root_name(node: cst.BaseExpression) -> str | None:
    """``x`` for ``x``, ``x.float()``, ``x.to(dtype)``: the parameter a call's argument is."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        node = node.func.value
    return node.value if isinstance(node, cst.Name) else None


def _shape_of(node: cst.BaseExpression) -> str | None:
    """``x`` for ``x.shape`` and ``x.size()``."""
    if isinstance(node, cst.Call) and not node.args:
        node = node.func
        if isinstance(node, cst.Attribute) and node.attr.value == "size" and isinstance(node.value, cst.Name):
            return node.value.value
        return None
    if isinstance(node, cst.Attribute) and node.attr.value == "shape" and isinstance(node.value, cst.Name):
        return node.value.value
    return None


def method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def find_class(tree: cst.Module, name: str) -> cst.ClassDef | None:
    return next((s for s in tree.body if isinstance(s, cst.ClassDef) and s.name.value == name), None)


def read_class(
    cls: cst.ClassDef | None,
    params: list[str],
    tree: cst.Module | None = None,
    path: str = "",
    given: dict[str, Any] | None = None,
    read: Read | None = None,
) -> Reading:
    """What ``cls``'s ``__init__`` and ``forward`` say about ``params`` (forward's); ``tree``
    (the file, at ``path``) gives the config dataclasses a required parameter takes;
    ``given``: the constructor's arguments where a factory passes them; ``read``: the
    project's other files (a config imported from one)."""
    given = given or {}
    r = Reading(uses={p: Use() for p in params})
    init = method(cls, "__init__") if cls is not None else None
    if init is not None:
        signature = [*init.params.params[1:], *init.params.kwonly_params]
        required = [p for p in signature if p.default is None and p.name.value not in given]
        guessed, r.missing = guess_required(required, tree or cst.Module([]), path, literal, read)
        for p in signature:  # in the signature's order: literal defaults, and the guesses for the rest
            value = literal(p.default) if p.default is not None else guessed.init.get(p.name.value)
            value = given.get(p.name.value, value)
            if value is not None:
                r.init[p.name.value] = value
        r.notes = guessed.notes
        r.sizes.update(guessed.sizes)
        r.sizes.update({n: v for n, v in r.init.items() if not isinstance(v, dict)})
        init.visit(_Init(r))
    if tree is not None:  # (a cache passed in has its shape; one kept, its length: scaffold.fitted)
        tree.visit(_Allocations(r))
    forward = method(cls, "forward") if cls is not None else None
    if forward is not None:
        forward.visit(_Forward(r))
    return r
