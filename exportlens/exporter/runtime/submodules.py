"""What each submodule is called with, and which of its inputs' dims follow the model's
dynamic dims (torch side; ``exportlens tree``).

The model runs eagerly twice: on its example inputs, and with every dynamic dim at
another size. A submodule's input dim that is the dim's example size in the first run
and its other size in the second follows that dim: the submodule is exported with it
dynamic, under the same name and range. A dim of the same size only by chance (a hidden
size of 8 beside a batch of 8) keeps its size in the second run, and stays static.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from inspect import Parameter as P
from typing import Any

import sympy
import torch

from .compat.internals import pytree
from .inputs import Built, copied
from .naming.symbols import Names

Call = tuple[tuple[Any, ...], dict[str, Any]]  # a forward's args and kwargs


@dataclass(frozen=True)
class Carried:
    """The model's dynamic dims: each one's example size, other size and Dim."""

    example: dict[str, int]
    other: dict[str, int]
    dims: dict[str, Any]  # name -> torch Dim (its range)

    def follows(self, first: int, second: int) -> str | None:
        """The dim whose sizes these are, in the two runs."""
        return next((n for n, e in self.example.items() if e == first and self.other[n] == second), None)


def recorded_calls(
    model: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Call], Exception | None]:
    """Each submodule's first call (path -> args, kwargs), from one eager run; and what the
    run raised (None where it ran through): the calls before the error are kept."""
    calls: dict[str, Call] = {}

    def hook_for(path: str) -> Any:
        def hook(_module: torch.nn.Module, a: tuple[Any, ...], kw: dict[str, Any]) -> None:
            if path not in calls:  # a module called again (shared, or in a loop): its first call stands
                calls[path] = (copied(a), copied(kw))

        return hook

    with _hooked(model, hook_for), torch.no_grad():
        try:
            model(*copied(args), **copied(kwargs))
        except Exception as exc:  # on meta, a value read (``if mask.any():``) stops it
            return calls, exc
    return calls, None


@contextlib.contextmanager
def _hooked(model: torch.nn.Module, hook_for: Any) -> Iterator[None]:
    handles = [m.register_forward_pre_hook(hook_for(p), with_kwargs=True) for p, m in model.named_modules()]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def carried(built: Built) -> tuple[Carried, Call] | None:
    """The model's dynamic dims with another size for each, and its inputs at those sizes;
    None where it has none (or none a second run can take)."""
    leaves = pytree.tree_leaves((built.args, built.kwargs))
    example: dict[str, int] = {}
    for path, leaf in zip(built.paths(), leaves):
        for axis, name in built.names.by_input.get(path, {}).items():
            if name in built.names.roots and isinstance(leaf, torch.Tensor):
                example.setdefault(name, int(leaf.shape[axis]))
    if not example:
        return None
    other = _other_sizes(example, built.names.roots)
    if other is None:
        return None
    resized = [_resized(leaf, built.names.by_input.get(path, {}), other) for path, leaf in zip(built.paths(), leaves)]
    args, kwargs = pytree.tree_unflatten(resized, pytree.tree_structure((built.args, built.kwargs)))
    dims = {n: built.names.roots[n] for n in example}
    return Carried(example, other, dims), (tuple(args), dict(kwargs))


def _other_sizes(example: dict[str, int], roots: dict[str, Any]) -> dict[str, int] | None:
    """A size for each dim in its range, none of them a size of the first run, none shared."""
    taken = set(example.values())
    other = {}
    for name, size in example.items():
        low, high = max(getattr(roots[name], "min", 2) or 2, 2), getattr(roots[name], "max", None) or 2**62
        found = next(
            (c for c in (*range(size + 1, size + 9), *range(size - 1, 1, -1)) if low <= c <= high and c not in taken),
            None,
        )
        if found is None:
            return None
        other[name] = found
        taken.add(found)
    return other


def _resized(leaf: Any, axes: dict[int, str], sizes: dict[str, int]) -> Any:
    """``leaf`` with each named axis at its other size, its values repeated (token ids stay ids)."""
    if not isinstance(leaf, torch.Tensor):
        return leaf
    for axis, label in axes.items():
        n = _size(label, sizes)
        if n is not None:
            index = torch.arange(n, device=leaf.device) % max(leaf.shape[axis], 1)
            leaf = leaf.index_select(axis, index)
    return leaf


def _size(label: str, sizes: dict[str, int]) -> int | None:
    """The size a dim's label (``seq``, ``2*seq + 1``) is at ``sizes``."""
    if label in sizes:
        return sizes[label]
    try:
        value = sympy.sympify(label).subs({sympy.Symbol(n): v for n, v in sizes.items()})
    except (sympy.SympifyError, TypeError, ValueError):
        return None
    return int(value) if value.is_Integer else None


def sub_built(module: torch.nn.Module, call: Call, again: Call | None, dims: Carried | None) -> tuple[Any, Built]:
    """A submodule's export: what to export and on which inputs, its recorded call with each
    dim that follows a model's dim dynamic (``again``: its call in the second run), named as
    the model names it. Inputs go by name, in the order torch matches dynamic shapes to them."""
    try:
        signature = inspect.signature(module.forward)
        bound = signature.bind(*call[0], **call[1]).arguments
    except (TypeError, ValueError):
        return module, Built(call[0], call[1], None, Names(), [f"args[{i}]" for i in range(len(call[0]))])
    kinds = {name: p.kind for name, p in signature.parameters.items()}
    if any(kinds[name] is P.VAR_POSITIONAL for name in bound):  # no name to give them: exported as called
        return module, Built(call[0], call[1], None, Names(), list(kinds))
    flat = _flat(bound, kinds)
    other = _flat(signature.bind(*again[0], **again[1]).arguments, kinds) if again is not None else {}
    names = Names()
    shapes = {name: _dynamic(value, other.get(name), dims, name, f"L[{name!r}]", names) for name, value in flat.items()}
    dynamic = any(leaf is not None for leaf in pytree.tree_leaves(shapes))
    first = [n for n in flat if kinds.get(n) is P.POSITIONAL_ONLY]
    args, kwargs = tuple(flat[n] for n in first), {n: v for n, v in flat.items() if n not in first}
    built = Built(args, kwargs, shapes if dynamic else None, names, list(flat))
    built.name_flat_sources()
    named = not any(kinds[name] is P.VAR_KEYWORD for name in bound)
    return (module if named else _named(module, first, list(kwargs))), built


def _flat(bound: dict[str, Any], kinds: dict[str, Any]) -> dict[str, Any]:
    """The bound arguments, ``**kwargs``' own spread among them."""
    out: dict[str, Any] = {}
    for name, value in bound.items():
        out.update(value if kinds[name] is P.VAR_KEYWORD else {name: value})
    return out


class _Named(torch.nn.Module):
    """A submodule called with ``**kwargs`` as one whose forward names each input: torch
    2.13 cannot match dynamic shapes to the inputs of a ``**kwargs`` (it counts them twice)."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)


def _named(module: torch.nn.Module, positional: list[str], keywords: list[str]) -> torch.nn.Module:
    params = [inspect.Parameter("self", P.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(n, P.POSITIONAL_ONLY) for n in positional]
    params += [inspect.Parameter(n, P.POSITIONAL_OR_KEYWORD) for n in keywords]

    def forward(self: _Named, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    forward.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return type(type(module).__name__, (_Named,), {"forward": forward})(module)


def _dynamic(value: Any, other: Any, dims: Carried | None, path: str, source: str, names: Names) -> Any:
    """``value``'s dynamic_shapes entry: the axes that follow a model's dim, each its Dim."""
    if isinstance(value, torch.Tensor):
        if dims is None or not isinstance(other, torch.Tensor) or other.dim() != value.dim():
            return None
        axes = {}
        for axis, (first, second) in enumerate(zip(value.shape, other.shape)):
            name = dims.follows(int(first), int(second))
            if name is not None:
                axes[axis] = dims.dims[name]
                names.roots[name] = dims.dims[name]
                names.add(path, source, axis, name)
        return axes or None
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        others = other if isinstance(other, (tuple, list)) and len(other) == len(value) else [None] * len(value)
        return type(value)(
            _dynamic(v, o, dims, f"{path}[{i}]", f"{source}[{i}]", names) for i, (v, o) in enumerate(zip(value, others))
        )
    if type(value) is dict:
        by_key = other if isinstance(other, dict) else {}
        return {
            k: _dynamic(v, by_key.get(k), dims, f"{path}[{k!r}]", f"{source}[{k!r}]", names) for k, v in value.items()
        }
    return None
