"""Example inputs and dynamic_shapes from a spec, and the user's name for every axis (torch side)."""

from __future__ import annotations

import enum
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from inspect import Parameter as P
from typing import Any

import torch
from torch.export import Dim

from ..core.report import Probe, ProbeFill
from ..spec.loading import DimSpec, ExportSpec, IntInput, TensorFill, TensorInput, ValueInput
from ..spec.module_spec import auto_sizes, example_size
from ..spec.shapes import AUTO, DTYPES, Derived
from .compat.internals import flat_input_source, positional_input_source, pytree
from .naming.symbols import Names

MAX_DECLARED = 8  # of a class's probe_inputs() that are run: a few runs of the program


@dataclass
class Built:
    """The example inputs and dynamic_shapes one export runs with, and the user's name for each axis."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    dynamic_shapes: dict[str, Any] | None
    names: Names
    params: list[str] = field(default_factory=list)  # forward's parameter names, in order
    probe_inputs: Any = None  # the class's own ``probe_inputs()`` (inputs its model takes), where it has one
    arg_paths: list[str] = field(default_factory=list)  # each positional argument's input (``args[0]`` of ``*args``)

    def declared(self) -> list[Built]:
        """The inputs of the class's ``probe_inputs()``, each as these are (names, spec); none
        where it has none."""
        if not callable(self.probe_inputs):
            return []
        out = []
        for got in list(self.probe_inputs())[:MAX_DECLARED]:
            args, kwargs = as_call(got)
            out.append(replace(self, args=args, kwargs=kwargs))
        return out

    def paths(self) -> list[str]:
        """``x``, ``ys[0]``, ``z['a']`` for each flattened input leaf, in torch's order."""
        out = []
        for keypath, _ in pytree.tree_flatten_with_path((self.args, self.kwargs))[0]:
            # torch's key entries, each read by what it holds: ``.idx`` a position, ``.key`` a name
            entries: tuple[Any, ...] = tuple(keypath)
            first, second, *rest = entries
            if first.idx == 1:
                head = second.key
            else:
                names = self.arg_paths or self.params
                head = names[second.idx] if second.idx < len(names) else f"args[{second.idx}]"
            out.append(head + "".join(f"[{k.idx}]" if hasattr(k, "idx") else f"[{k.key!r}]" for k in rest))
        return out

    def traced_size(self, dim: str) -> int | None:
        """The size the example inputs give ``dim`` (where an input's axis is named so)."""
        leaves = pytree.tree_flatten((self.args, self.kwargs))[0]
        for path, leaf in zip(self.paths(), leaves):
            axes = [axis for axis, name in self.names.by_input.get(path, {}).items() if name == dim]
            if axes and isinstance(leaf, torch.Tensor) and axes[0] < leaf.dim():
                return int(leaf.shape[axes[0]])
        return None

    def name_flat_sources(self) -> None:
        """Strict mode names inputs ``L['flat_args'][i]``, and 2.7's non-strict mode positional
        ones ``L['args'][0][i]``: name those sources too."""
        for i, path in enumerate(self.paths()):
            for axis, name in self.names.by_input.get(path, {}).items():
                self.names.by_source[f"{flat_input_source(i)}.size()[{axis}]"] = name
            if path in self.names.ints:
                self.names.by_source[flat_input_source(i)] = self.names.ints[path]
        for i, param in enumerate(self.params[: len(self.args)]):
            head, alias = f"L[{param!r}]", positional_input_source(i)
            for source, name in list(self.names.by_source.items()):
                if source.startswith((head + "[", head + ".")) or source == head:
                    self.names.by_source.setdefault(alias + source[len(head) :], name)


def _dtype(short: str) -> torch.dtype:
    return getattr(torch, DTYPES[short])


def _tensor(
    t: TensorInput, dims: dict[str, DimSpec], device: str, auto: dict[tuple[str, int], int], path: str
) -> torch.Tensor:
    size = [auto[(path, i)] if s == AUTO else example_size(s, dims) for i, s in enumerate(t.shape.sizes)]
    dtype = _dtype(t.shape.dtype)
    if t.low is not None and t.high is not None:  # (a spec gives both or neither)
        if dtype.is_floating_point:
            return torch.empty(size, dtype=dtype, device=device).uniform_(t.low, t.high)
        return torch.randint(int(t.low), int(t.high), size, dtype=dtype, device=device)
    if t.fill is TensorFill.ARANGE:
        n = 1
        for s in size:
            n *= s
        return torch.arange(n, device=device).reshape(size).to(dtype)
    if t.fill in (TensorFill.RANDN, TensorFill.RAND) and not (dtype.is_floating_point or dtype.is_complex):
        return torch.randint(0, 2 if dtype == torch.bool else 10, size, device=device).to(dtype)
    return getattr(torch, t.fill.value)(size, dtype=dtype, device=device)


def copied(inputs: Any) -> Any:
    """Inputs of one's own: forward may mutate what it is given, and each run must see the examples."""
    return pytree.tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, inputs)


def build_from_spec(spec: ExportSpec, params: Sequence[inspect.Parameter], device: str) -> Built:
    """Tensors on ``device``, passed as ``call_order`` says; dynamic_shapes keyed as torch binds
    the call to ``params`` (forward's, without self)."""
    names = Names()
    for name, d in spec.dims.items():
        names.roots[name] = Dim(name, **{k: v for k, v in (("min", d.min), ("max", d.max)) if v is not None})
    auto = auto_sizes(spec.inputs, spec.dims)
    args, kwargs, arg_shapes, kwarg_shapes, arg_paths = [], {}, [], {}, []
    order, named = call_order(spec.inputs, params), {p.name for p in params}
    for name, how in order:
        for path, source, item in _pieces(name, how, spec.inputs[name]):
            value, shape = _example(item, path, spec.dims, device, auto), _dynamic(item, path, source, names)
            if how in (BY_POSITION, SPREAD_ARGS):
                args.append(value)
                arg_shapes.append(shape)
                arg_paths.append(path)
            else:
                kwargs[path], kwarg_shapes[path] = value, shape
    shapes = _bound(params, arg_shapes, kwarg_shapes)
    dynamic = any(s is not None for s in pytree.tree_leaves(shapes, is_leaf=lambda s: s is None))
    gathered = [name for name, how in order if how is SPREAD_KWARGS or (how is BY_NAME and name not in named)]
    if dynamic and gathered:  # torch keys them one way when it checks dynamic_shapes, another when it uses them
        raise ValueError(
            f"torch.export cannot take dynamic sizes while forward's **kwargs gathers {', '.join(map(repr, gathered))}"
            " (pytorch/pytorch#150022): pass tensors through *args (`args = [...]`), or make every size static"
        )
    return Built(tuple(args), kwargs, shapes if dynamic else None, names, arg_paths=arg_paths)


class Passed(enum.Enum):
    """How one input reaches forward."""

    BY_POSITION = "position"
    BY_NAME = "name"
    SPREAD_ARGS = "*args"  # an array: each item one more positional argument
    SPREAD_KWARGS = "**kwargs"  # a table: each entry one more keyword argument


BY_POSITION, BY_NAME, SPREAD_ARGS, SPREAD_KWARGS = Passed


def call_order(inputs: dict[str, Any], params: Sequence[inspect.Parameter]) -> list[tuple[str, Passed]]:
    """How each input is passed: positional parameters by position until one is skipped (its
    default stays), every later one by name, as a caller writes ``f(x, return_dict=False)``;
    the ``*args`` parameter's array spread after them, the ``**kwargs`` one's table spread by
    name, any other name into ``**kwargs``."""
    out, skipped, kinds = [], "", {p.name: p.kind for p in params}
    for p in params:
        given = p.name in inputs
        if given and skipped and p.kind in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL):  # no name to pass it by
            raise ValueError(f"'{p.name}' follows '{skipped}', which has no input, and is passed by position only")
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            if given:
                out.append((p.name, BY_NAME if skipped else BY_POSITION))
            skipped = skipped or ("" if given else p.name)
        elif p.kind is P.VAR_POSITIONAL and given:
            out.append((p.name, SPREAD_ARGS))
        elif p.kind is P.VAR_KEYWORD and given and isinstance(inputs[p.name], dict):
            out.append((p.name, SPREAD_KWARGS))
        elif given:
            out.append((p.name, BY_NAME))
    taken = {name for name, _ in out}
    return out + [(name, BY_NAME) for name in inputs if name not in taken and kinds.get(name) is None]


def _pieces(name: str, how: Passed, value: Any) -> list[tuple[str, str, Any]]:
    """(path, torch's source, value) of each argument one input gives: one, or each item a
    ``*args`` array or a ``**kwargs`` table spreads."""
    if how is SPREAD_KWARGS:
        return [(key, f"L[{name!r}][{key!r}]", v) for key, v in value.items()]
    if how is SPREAD_ARGS:
        items = value if isinstance(value, tuple) else (value,)
        return [(f"{name}[{i}]", f"L[{name!r}][{i}]", v) for i, v in enumerate(items)]
    return [(name, f"L[{name!r}]", value)]


def _bound(params: Sequence[inspect.Parameter], arg_shapes: list[Any], kwarg_shapes: dict[str, Any]) -> Any:
    """dynamic_shapes keyed as torch keys them: by the parameter each value binds to (``args``
    and ``kwargs`` hold what ``*args``/``**kwargs`` gather); by input where it does not bind
    (forward's own check then says why)."""
    try:
        return dict(inspect.Signature(params).bind(*arg_shapes, **kwarg_shapes).arguments)
    except (TypeError, ValueError):
        return dict(zip([p.name for p in params], arg_shapes)) | kwarg_shapes


def forward_parameters(cls: type[Any]) -> list[inspect.Parameter]:  # any class with a forward
    """forward's parameters as Python sees them, without self (it may be inherited, even from torch)."""
    try:
        return list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return []


def _example(v: Any, path: str, dims: dict[str, DimSpec], device: str, auto: dict[tuple[str, int], int]) -> Any:
    """The example value of one input (``path``: its name, ``x[0]``, ``x['a']``)."""
    if isinstance(v, TensorInput):
        return _tensor(v, dims, device, auto, path)
    if isinstance(v, ValueInput):
        return torch.tensor(v.value, dtype=_dtype(v.dtype) if v.dtype else None, device=device)
    if isinstance(v, IntInput):
        return dims[v.dim].example
    if isinstance(v, tuple):
        return tuple(_example(x, f"{path}[{i}]", dims, device, auto) for i, x in enumerate(v))
    if isinstance(v, dict):
        return {k: _example(x, f"{path}[{k!r}]", dims, device, auto) for k, x in v.items()}
    return v


def _dynamic(v: Any, path: str, source: str, names: Names) -> Any:
    """One input's dynamic_shapes entry, naming each named axis (``source``: torch's ``L['x']``)."""
    if isinstance(v, TensorInput):
        axes = {}
        for axis, s in enumerate(v.shape.sizes):
            if isinstance(s, Derived):
                root = names.roots[s.root]
                axes[axis] = s.coeff * root + s.offset if s.coeff != 1 else root + s.offset
                names.add(path, source, axis, str(s))
            elif s == AUTO:
                axes[axis] = Dim.AUTO
            elif isinstance(s, str):
                axes[axis] = names.roots[s]
                names.add(path, source, axis, s)
        return axes or None
    if isinstance(v, IntInput):
        names.add_value(path, source, v.dim)
        return _dynamic_int(names.roots[v.dim])
    if isinstance(v, tuple):
        return tuple(_dynamic(x, f"{path}[{i}]", f"{source}[{i}]", names) for i, x in enumerate(v))
    if isinstance(v, dict):
        return {k: _dynamic(x, f"{path}[{k!r}]", f"{source}[{k!r}]", names) for k, x in v.items()}
    return None


def _dynamic_int(dim: Any) -> Any:
    """An int input's entry: torch takes no named Dim for an int, only the DYNAMIC hint, with
    the dim's bounds where this torch's hint takes them (2.8+)."""
    bounds = {k: v for k in ("min", "max") if (v := getattr(dim, k, None)) is not None and abs(v) < 2**62}
    try:
        return Dim.DYNAMIC(**bounds) if bounds else Dim.DYNAMIC
    except TypeError:  # a hint that cannot be called
        return Dim.DYNAMIC


def build_from_code(cls: type, method: str, forward_params: list[str]) -> Built:
    """Call the class's own example method (``example_inputs()``, or the one the spec names) and
    read its ``dynamic_shapes`` (an attribute, or a method to call); name the axes it marks."""
    args, kwargs = as_call(getattr(cls, method)())
    shapes = getattr(cls, "dynamic_shapes", None)
    if callable(shapes):
        shapes = shapes()
    names = Names()
    if isinstance(shapes, (tuple, list)):  # positional form: name them after forward's parameters
        shapes = dict(zip(forward_params, shapes))
    if isinstance(shapes, dict):
        values = dict(zip(forward_params, args)) | kwargs
        for key, dyn in shapes.items():
            _name_axes(dyn, values.get(key), str(key), f"L[{key!r}]", names)
    return Built(args, kwargs, shapes, names)


def as_call(got: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """What an example method returned as forward's arguments: ``(args, kwargs)``, a tuple of
    args, or one value."""
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], (tuple, list)) and isinstance(got[1], dict):
        return tuple(got[0]), dict(got[1])
    if isinstance(got, (tuple, list)):
        return tuple(got), {}
    return (got,), {}


def _name_axes(dyn: Any, value: Any, path: str, source: str, names: Names) -> None:
    if isinstance(dyn, dict) and isinstance(value, torch.Tensor):
        for axis, d in dyn.items():
            label = dim_label(d)
            if label:
                names.add(path, source, int(axis), label)
                root = getattr(d, "root", d)
                names.roots.setdefault(getattr(root, "__name__", label), root)
    elif isinstance(dyn, (tuple, list)) and isinstance(value, torch.Tensor):
        _name_axes(dict(enumerate(dyn)), value, path, source, names)
    elif isinstance(dyn, (tuple, list)) and isinstance(value, (tuple, list)):
        for i, (d, v) in enumerate(zip(dyn, value)):
            _name_axes(d, v, f"{path}[{i}]", f"{source}[{i}]", names)
    elif isinstance(dyn, dict) and isinstance(value, dict):
        for k, d in dyn.items():
            _name_axes(d, value.get(k), f"{path}[{k!r}]", f"{source}[{k!r}]", names)


def dim_label(d: Any) -> str | None:
    """A Dim's name as the user wrote it; derived dims as ``2*seq + 1``."""
    name = getattr(d, "__name__", None)
    if name is None or name in ("AUTO", "STATIC", "DYNAMIC") or not hasattr(d, "min"):
        return None
    root = getattr(d, "root", None)
    if root is not None:  # a derived dim: torch names it after its expression
        import sympy

        s = sympy.Symbol(root.__name__, integer=True)
        return str(d.fn(s)) if hasattr(d, "fn") else name
    return name


def declared_probes(built: Built) -> tuple[Probe, ...]:
    """One probe for each of the class's ``probe_inputs()`` (none where it has none, or they fail)."""
    try:
        count = len(built.declared())
    except Exception:  # the user's method: a probe set without it, never a finding lost
        return ()
    return tuple(Probe(f"probe_inputs() #{i + 1}", ProbeFill.DECLARED, i) for i in range(count))
