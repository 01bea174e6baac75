"""One module's export spec: its pyproject table (or ``example_inputs()``) checked
against forward's signature, and the sizes its dims are traced with (no torch)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..core import codes
from ..core.report import Finding
from ..core.targets import Location, ModuleClass, ParamKind, Span, Target
from .jaxtyping_spec import read_annotations
from .loading import (
    PYPROJECT,
    DimSpec,
    ExportSpec,
    IntInput,
    ProjectSpecs,
    SpecSource,
    TensorFill,
    TensorInput,
    ValueInput,
    table_settings,
)
from .shapes import AUTO, DTYPES, Derived, ShapeError, looks_like_shape, parse_shape
from .values import construction


def resolve(module: ModuleClass, project: ProjectSpecs) -> tuple[ExportSpec | None, list[Finding]]:
    """The spec for ``module`` and the problems with it; (None, []) when it has none.
    A class with variants: its first variant's spec, and every variant's problems."""
    specs = resolve_variants(module, project)
    if specs:
        return next((s for _, s, _ in specs if s is not None), None), [f for _, _, found in specs for f in found]
    if module.example_method and module.example_span:
        span = module.example_span
        loc = Location(module.path, span)
        return ExportSpec(
            module.target, SpecSource.CODE, loc, settings=project.settings, example_method=module.example_method
        ), []
    annotated = read_annotations(module)  # the last source: jaxtyping annotations on forward, no table needed
    if annotated is not None:
        return _from_table(module, {}, annotated.location, project, module.target)
    return None, []


def resolve_variants(
    module: ModuleClass, project: ProjectSpecs
) -> list[tuple[str | None, ExportSpec | None, list[Finding]]]:
    """(variant, spec, problems) of each pyproject table of ``module`` (variant None: the class's own)."""
    out = []
    for target, (table, loc) in project.tables.items():
        t = Target.parse(target)
        if t.module == module.target:
            out.append((t.variant, *_from_table(module, table, loc, project, target)))
    return out


NONE = "None"  # an input written so is passed as None (exactly Python's spelling: "none" stays text)
INT_DIM = re.compile(r"int\[\s*([A-Za-z_]\w*)\s*\]")  # "int[pos]": an int input whose values range as the dim pos
_TABLE_KEYS = (
    "init",
    "factory",
    "inputs",
    "dims",
    "device",
    "strict",
    "ir",
    "timeout",
    "memory_limit",
    "sandbox",
    "targets",
    "ignore",
)


class _Table:
    """One module's pyproject table being read: where each key is written, and what is wrong."""

    def __init__(self, module: ModuleClass, loc: Location, project: ProjectSpecs, target: str) -> None:
        self.module, self.loc, self.tree = module, loc, project.tree
        self.findings: list[Finding] = []
        self.locations: dict[str, Location] = {}
        self.tables = self.tree.module_tables(target)  # a variant's key is in its own table, else its class's

    def at(self, key: str, sub: str | None = None) -> Location:
        """Where ``key`` (``key.sub``) of this module's table is written: the key's span; the
        table's line where it is not written."""
        for path in [(key, sub), (key,)] if sub is not None else [(key,)]:
            span = next((s for table in self.tables if (s := self.tree.key((*table, *path)))), None)
            if span is not None:
                return Location(PYPROJECT, span)
        return Location(PYPROJECT, Span(self.loc.line))

    def error(self, code: codes.Code, message: str, where: Location, dims: tuple[str, ...] = ()) -> None:
        self.findings.append(codes.finding_at(code, message, where.path, where.span, dims=dims))

    def table(self, raw: Any, key: str, message: str) -> dict[str, Any]:
        """``raw`` if it is a table, else {} and an error on ``key``'s line."""
        if isinstance(raw, dict):
            return raw
        self.error(codes.SPEC_INVALID, message, self.at(key))
        return {}

    def inputs(self, raw_inputs: dict[str, Any]) -> dict[str, Any]:
        inputs: dict[str, Any] = {}
        for name, raw in raw_inputs.items():
            where = self.locations[f"inputs.{name}"] = self.at("inputs", name)
            try:
                inputs[name] = _input(raw)
            except ShapeError as e:
                self.error(codes.SPEC_DTYPE if e.unknown_dtype else codes.SPEC_SHAPE, f"input '{name}': {e}", where)
            except ValueError as e:
                self.error(codes.SPEC_INVALID, f"input '{name}': {e}", where)
        return inputs


def _from_table(
    module: ModuleClass, table: Any, loc: Location, project: ProjectSpecs, target: str
) -> tuple[ExportSpec | None, list[Finding]]:
    t = _Table(module, loc, project, target)
    if not isinstance(table, dict):
        t.error(codes.SPEC_INVALID, f"the spec for {target} must be a table", loc)
        return None, t.findings
    for key in sorted(set(table) - set(_TABLE_KEYS)):
        t.error(
            codes.SPEC_INVALID,
            f"unknown key '{key}' in the spec for {target} (known: {', '.join(_TABLE_KEYS)})",
            t.at(key),
        )
    settings = table_settings(table, project.settings, t.at, t.findings)
    if "targets" in table:  # where a target's problem with the environment is said (runtime/lowering/)
        t.locations["targets"] = t.at("targets")
    if "ignore" in table and (problem := ignore_problem(table["ignore"])):
        t.error(codes.SPEC_INVALID, problem, t.at("ignore"))  # suppressions.py reads it
    raw_init = t.table(table.get("init", {}), "init", "init must be a table of constructor keyword arguments")
    init, factory = construction(raw_init, table.get("factory"), t.at, t.locations, t.findings)
    raw_inputs = t.table(table.get("inputs", {}), "inputs", 'inputs must be a table: { x = "f32[batch, 3]" }')
    annotated = None if "inputs" in table else read_annotations(module)  # a table's inputs win over annotations
    if annotated is not None:
        inputs, loc, source = dict(annotated.inputs), annotated.location, SpecSource.ANNOTATIONS
        t.locations.update(annotated.locations)  # before _dims: a dim the table bounds is placed on the table
        t.findings += annotated.findings
    else:
        inputs, source = t.inputs(raw_inputs), SpecSource.PYPROJECT
        t.findings += _check_signature(module, inputs, raw_inputs, t.at)
    dims = _dims(table.get("dims", {}), inputs, t)
    if any(f.severity.value == "error" for f in t.findings):
        return None, t.findings
    spec = ExportSpec(target, source, loc, init, _ordered(module, inputs), dims, settings, None, t.locations, factory)
    return spec, t.findings


def _ordered(module: ModuleClass, inputs: dict[str, Any]) -> dict[str, Any]:
    """Inputs in forward's parameter order (positional arguments are passed in order)."""
    order = [p.name for p in module.forward.params] if module.forward else []
    return {k: inputs[k] for k in sorted(inputs, key=lambda k: order.index(k) if k in order else len(order))}


def _check_signature(module: ModuleClass, inputs: dict[str, Any], raw: dict[str, Any], at) -> list[Finding]:
    if module.forward is None:
        return []
    params = module.forward.params
    names = {p.name for p in params if p.kind is not ParamKind.VAR_KEYWORD}  # `args = [...]` spreads into *args
    takes_kwargs = any(p.kind is ParamKind.VAR_KEYWORD for p in params)
    signature = "forward(" + ", ".join(p.name for p in params) + ")"
    out: list[Finding] = []
    for name in raw:
        if name not in names and not takes_kwargs:
            where = at("inputs", name)
            out.append(
                codes.finding_at(
                    codes.SPEC_SIGNATURE, f"input '{name}' is not a parameter of {signature}", where.path, where.span
                )
            )
    missing = [p.name for p in params if not p.kind.variadic and not p.has_default and p.name not in raw]
    if missing:
        where = at("inputs")
        plural = "s" if len(missing) > 1 else ""
        message = f"missing input{plural} {', '.join(repr(m) for m in missing)} required by {signature}"
        out.append(codes.finding_at(codes.SPEC_SIGNATURE, message, where.path, where.span))
    return out


def _input(raw: Any) -> Any:
    """pyproject value -> TensorInput | ValueInput | IntInput | plain value | nested tuple/dict."""
    if raw == NONE:  # TOML has no null
        return None
    if isinstance(raw, str) and (dynamic_int := INT_DIM.fullmatch(raw.strip())):
        return IntInput(dynamic_int.group(1))
    if isinstance(raw, str):
        return TensorInput(parse_shape(raw)) if looks_like_shape(raw) else raw
    if isinstance(raw, list):
        return tuple(_input(v) for v in raw)
    if isinstance(raw, dict):
        if "shape" in raw:
            extra = set(raw) - {"shape", "low", "high", "fill"}
            if extra:
                raise ValueError(
                    f"unknown key(s) {', '.join(sorted(extra))} in a tensor table (known: shape, low, high, fill)"
                )
            fill, fills = raw.get("fill", TensorFill.RANDN.value), [f.value for f in TensorFill]
            if fill not in fills:
                raise ValueError(f"fill '{fill}' is not one of {', '.join(fills)}")
            if ("low" in raw) != ("high" in raw):
                raise ValueError("give both low and high")
            if "low" in raw and not raw["low"] < raw["high"]:
                raise ValueError(f"low ({raw['low']}) must be below high ({raw['high']})")
            return TensorInput(parse_shape(str(raw["shape"])), TensorFill(fill), raw.get("low"), raw.get("high"))
        if "value" in raw:
            dtype = raw.get("dtype")
            if dtype is not None and dtype not in DTYPES:
                raise ShapeError(f"unknown dtype '{dtype}' (known: {', '.join(DTYPES)})", unknown_dtype=True)
            return ValueInput(raw["value"], dtype)
        return {k: _input(v) for k, v in raw.items()}
    return raw


def int_dims(value: Any):
    """The dim of every IntInput in a nested input value."""
    if isinstance(value, IntInput):
        yield value.dim
    elif isinstance(value, (tuple, dict)):
        for v in value if isinstance(value, tuple) else value.values():
            yield from int_dims(v)


def tensors(value: Any):
    """Every TensorInput in a nested input value."""
    if isinstance(value, TensorInput):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            yield from tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors(v)


def _dims(raw: Any, inputs: dict[str, Any], t: _Table) -> dict[str, DimSpec]:
    used: dict[str, None] = {}
    static: set[int] = set()
    derived: list[Derived] = []
    for value in inputs.values():
        for tensor in tensors(value):
            used.update(dict.fromkeys(tensor.shape.names))
            static.update(s for s in tensor.shape.sizes if isinstance(s, int))
            derived += [s for s in tensor.shape.sizes if isinstance(s, Derived)]
        used.update(dict.fromkeys(int_dims(value)))
    if not isinstance(raw, dict):
        t.error(codes.SPEC_DIMS, "dims must be a table: { batch = { min = 1, max = 64 } }", t.at("dims"))
        raw = {}
    declared: dict[str, DimSpec] = {}
    for name, table in raw.items():
        where = t.locations[f"dims.{name}"] = t.at("dims", name)
        problem = _dim_problem(name, table) or (
            None if name in used else f"dim '{name}' is not used by any input shape"
        )
        if problem:
            t.error(codes.SPEC_DIMS, problem, where, (name,))
        else:
            declared[name] = DimSpec(name, table.get("min"), table.get("max"), table.get("example"))
    dims = {name: _implied_min(declared.get(name, DimSpec(name)), derived, t) for name in used}
    return choose_examples(dims, static, derived)


def _implied_min(dim: DimSpec, derived: list[Derived], t: _Table) -> DimSpec:
    """A root's min where its derived sizes need one (``n - 6`` needs ``n >= 6``): implied
    when the spec gives none, as a shape cannot be negative; an error when it gives less."""
    needed = max((-(d.offset // d.coeff) for d in derived if d.root == dim.name and d.coeff > 0), default=0)
    if needed <= (dim.min or 0):
        return dim
    uses = ", ".join(f"`{d.text}`" for d in derived if d.root == dim.name and d.value(dim.min or 0) < 0)
    if dim.min is not None or (dim.max is not None and dim.max < needed):
        bound = f"min ({dim.min})" if dim.min is not None else f"max ({dim.max})"
        message = f"dim '{dim.name}': {uses} would be negative at its {bound}; its min must be at least {needed}"
        t.error(codes.SPEC_DIMS, message, t.locations.get(f"dims.{dim.name}") or t.at("inputs"), (dim.name,))
    return replace(dim, min=max(needed, dim.min or 0))


def _dim_problem(name: str, table: Any) -> str | None:
    """What is wrong with the table of dim ``name``, in a sentence; None when nothing."""
    if not isinstance(table, dict):
        return f"dim '{name}' must be a table like {{ min = 2, max = 64 }}"
    extra = set(table) - {"min", "max", "example"}
    if extra:
        return f"dim '{name}': unknown key(s) {', '.join(sorted(extra))} (known: min, max, example)"
    lo, hi, ex = (table.get(k) for k in ("min", "max", "example"))
    if any(v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0) for v in (lo, hi, ex)):
        return f"dim '{name}': min, max and example must be whole numbers ≥ 0"
    if lo is not None and hi is not None and lo > hi:
        return f"dim '{name}': min ({lo}) is above max ({hi})"
    if ex is not None and ((lo is not None and ex < lo) or (hi is not None and ex > hi)):
        return f"dim '{name}': example {ex} is outside [{lo if lo is not None else 0}, {hi if hi is not None else '∞'}]"
    return None


def choose_examples(dims: dict[str, DimSpec], static: set[int], derived: list[Derived]) -> dict[str, DimSpec]:
    """Give every dim an example size: never 0 or 1 (torch specializes those) and,
    unless the user chose, distinct from every other size, so that no two dims
    look equal by accident."""
    taken = set(static) | {d.example for d in dims.values() if d.example is not None}
    out: dict[str, DimSpec] = {}
    for name, dim in dims.items():
        if dim.example is not None:
            out[name] = dim
            continue
        mine = list({(d.coeff, d.offset): d for d in derived if d.root == name}.values())  # each size once
        lo = max(dim.min or 0, 2)
        hi = dim.max if dim.max is not None else lo + 64
        pick = None
        for k in range(lo, max(hi, lo) + 1):
            sizes = [k] + [d.value(k) for d in mine]
            if all(s >= 2 for s in sizes) and not taken.intersection(sizes) and len(set(sizes)) == len(sizes):
                pick = k
                break
        if pick is None:
            pick = lo if dim.max is None or lo <= dim.max else dim.max
        taken.update([pick] + [d.value(pick) for d in mine])
        out[name] = replace(dim, example=pick)
    return out


def example_size(size: Any, dims: dict[str, DimSpec]) -> int:
    """The concrete size used for tracing (``?`` sizes: see ``auto_sizes``)."""
    if isinstance(size, int):
        return size
    example = dims[size.root if isinstance(size, Derived) else size].example
    assert example is not None  # choose_examples gave every dim one
    return size.value(example) if isinstance(size, Derived) else example


def auto_sizes(inputs: dict[str, Any], dims: dict[str, DimSpec]) -> dict[tuple[str, int], int]:
    """Example sizes for ``?`` axes, keyed by (input path, axis).

    A ``?`` takes the example of the size written at the same axis of another
    input of the same rank (``x: f32[batch, 4]``, ``y: f32[?, 4]``: most often the
    code needs them equal, and torch then ties them); otherwise a size of its own.
    """
    flat: list[tuple[str, TensorInput]] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, TensorInput):
            flat.append((path, v))
        elif isinstance(v, tuple):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{path}[{k!r}]")

    for name, v in inputs.items():
        walk(v, name)
    taken = {d.example for d in dims.values()} | {s for _, t in flat for s in t.shape.sizes if isinstance(s, int)}
    fresh = (k for k in range(3, 10**6) if k not in taken)
    out: dict[tuple[str, int], int] = {}
    for path, t in flat:
        for axis, size in enumerate(t.shape.sizes):
            if size != AUTO:
                continue
            twins = [
                o.shape.sizes[axis]
                for _, o in flat
                if o is not t and len(o.shape.sizes) == len(t.shape.sizes) and o.shape.sizes[axis] != AUTO
            ]
            out[(path, axis)] = example_size(twins[0], dims) if twins else next(fresh)
    return out


def ignore_problem(value: Any) -> str | None:
    """What is wrong with a module table's ``ignore``; None when it is a list of known codes."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return 'ignore must be a list of diagnostic codes, like ignore = ["EL204"]'
    unknown = [v for v in value if v not in codes.BY_CODE]
    return f"ignore: {unknown[0]!r} is no exportlens code (docs/diagnostics.md lists them)" if unknown else None
