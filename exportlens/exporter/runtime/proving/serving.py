"""Does the exported program serve what the spec declares? (torch side)

torch proves the graph valid for every size in the declared ranges, but not that
the model is: an embedding table of 128 positions under ``seq`` declared up to
1024 exports, and its program fails at seq 200, as eager does. So after a
successful export, run the program and eager on the example inputs (they must
agree), then eager and the program at each dim's bounds written in the spec, one dim
at a time, then at the corners of the box where dims are at a bound together
(corners.py: a KV cache's `past_len + new_len` fails only there); skipped on
``meta`` and for inputs over ``MAX_ELEMENTS``. A point where the model fails is
EL206, with the widest ranges that work (found by bisection on the line from the
examples to the point, the dims cut in proportion) as the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import sympy
import torch

from ...core import codes
from ...core.causes import Cause
from ...core.report import Finding, Fix, Narrowing
from ...core.sources import Sources
from ...spec.loading import DimSpec, ExportSpec, SpecSource, TensorInput
from ...spec.module_spec import example_size
from ..compat import messages as forms
from ..compat.internals import pytree
from ..context import Context
from ..fixing.fixes import spec_fix, spec_fixes
from ..fixing.pad_fixes import block_pad_fix
from ..inputs import Built, copied
from ..locate import GuardLog, deepest_in_traceback
from ..naming.explain import at
from ..naming.guard_ranges import finite
from ..naming.summary import in_user_names
from ..naming.symbols import from_shape_env, pretty
from ..naming.together import shared_cut
from ..reading.causes import cause_of
from ..reading.refused import Refusal, flattened, refusal
from ..reading.violations import Change, ChangeKind, first_line
from .agreement import differs as _differs  # (probes.py and lowering/agree.py take it from here)
from .corners import ALL_CORNERS, Point, corners, names_in, singles, span, toward, written_bounds
from .relations import edge_bound

MAX_ELEMENTS = 1 << 26  # of all inputs at one bound (256 MiB of float32): larger bounds are not run


Rebuild = Callable[[ExportSpec], Built]  # the example inputs of another spec (other example sizes)
Said = Callable[[str], str]  # the program's text in the user's names (summary.in_user_names)


def serving_findings(
    ep: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, device: str, log: GuardLog | None = None
) -> list[Finding]:
    """What the exported program cannot serve: the example inputs, or a declared bound
    (a size the program refuses on the line whose guard refuses it, from ``log``): each
    dim's bounds alone, then the corners of the box where several are at a bound together."""
    if device == "meta":
        return []  # no values to run on
    program = ep.module()
    said = in_user_names(ep, ctx)
    on_example = _on_example(program, model, ctx, said)
    if on_example is not None:
        return [on_example]
    if ctx.spec.source is not SpecSource.PYPROJECT:
        return []  # example_inputs() has one size per axis
    examples = {name: example_size(name, ctx.spec.dims) for name in ctx.spec.dims}
    bounds = written_bounds(ctx.spec.dims, examples, ctx.built.names.roots)
    run = Run(program, model, ctx, rebuild, said, log, examples)
    out, failed, served = [], set(), set()
    for point in singles(bounds):
        if point[0][0] in failed:
            continue
        if (finding := _at_point(point, run)) is not None:
            out.append(finding)
            failed.add(point[0][0])  # its first failing bound (max first) says it
        else:
            served.add(point[0])
    # a second problem where dims are large together (a cache's `start_pos + seq`, past a
    # prefill refused at `start_pos = 0`): only corners of bounds each served alone
    for point in corners(bounds, _paired(log, ctx, bounds)):
        if set(point) <= served and (finding := _at_point(point, run)) is not None:
            return [*out, finding]
    return out


@dataclass(frozen=True)
class Run:
    """What a bound run compares, and how it builds its inputs."""

    program: Any
    model: torch.nn.Module
    ctx: Context
    rebuild: Rebuild
    said: Said
    log: GuardLog | None
    examples: dict[str, int]


def _paired(log: GuardLog | None, ctx: Context, bounds: dict[str, tuple[int, ...]]) -> list[tuple[str, str]]:
    """The pairs of dims with bounds that a guard of the export names together."""
    if log is None or log.shape_env is None or len(bounds) <= ALL_CORNERS:
        return []  # (up to ALL_CORNERS dims, every corner is run)
    names = from_shape_env(log.shape_env, ctx.built.names).message
    pairs = []
    for event in log.events:
        over = {r for s in event.expr.free_symbols if s in names for r in bounds if r in names_in(names[s])}
        pairs += [(a, b) for a in sorted(over) for b in sorted(over) if a < b]
    return list(dict.fromkeys(pairs))


def _at_point(point: Point, run: Run) -> Finding | None:
    """EL206 where the program or eager fails at ``point``, or they disagree; None where it serves."""
    ctx = run.ctx
    built = inputs_with(ctx.spec, dict(point), run.rebuild)
    if built is None:
        return None
    eager, cause = failed_on(run.model, built, ctx.sources)
    exported, cause = (None, cause) if eager else failed_on(run.program, built)
    if forms.ASSUMED.search(eager or exported or ""):
        return None  # a value the user assumed (torch._check on data) need not hold on random inputs
    differs = "" if eager or exported else _disagreement(run.program, run.model, built)
    if not (eager or exported or differs):
        return None
    placed = _refused_on_line(point, exported, run) if exported else None
    return replace(placed or _unserved(point, (eager, exported, differs), run), cause=cause)


def _declared(point: Point, ctx: Context) -> str:
    """ "`seq` is declared as [2, 1024]", and the other dims of ``point`` after it."""
    said = []
    for name, _ in point:
        root = ctx.built.names.roots[name]
        said.append(f"[{root.min if finite(root.min) else 0}, {root.max if finite(root.max) else '∞'}]")
    first = f"`{point[0][0]}` is declared as {said[0]}"
    return ", ".join((first, *(f"`{n}` as {r}" for (n, _), r in zip(point[1:], said[1:]))))


def _sizes(point: Point) -> str:
    return ", ".join(f"{n} = {s}" for n, s in point)


def _unserved(point: Point, failures: tuple[str | None, str | None, str], run: Run) -> Finding:
    """EL206 on the first dim's spec line: what fails at ``point`` (each dim at a bound), with
    the widest ranges that serve (the dims cut together, in proportion) where eager fails or
    the outputs differ."""
    eager, exported, differs = failures
    ctx = run.ctx
    if eager:
        why = f"forward fails: {eager}"
    elif exported:
        why = f"the exported program fails where eager does not: {run.said(exported)}"
    else:
        why = f"the exported program's outputs are not eager's ({differs}): torch assumed a size it does not have there"
    together = " together" if len(point) > 1 else ""
    message = f"{_declared(point, ctx)}, but at {_sizes(point)}{together} {why}"
    fixes: tuple[Fix, ...] = ()
    if eager or differs:
        works = _widest(point, lambda b: _served(run.program, run.model, b), run)
        if works is not None:
            fixes = _narrowed(point, works, ctx)
    name = point[0][0]
    key = f"dims.{name}" if f"dims.{name}" in ctx.spec.locations else None
    loc = ctx.spec.where(key) if key else ctx.spec.location
    dims = tuple(n for n, _ in point)
    detail = eager or exported or differs
    return codes.finding_at(codes.UNSERVED_RANGE, message, loc.path, loc.span, fixes=fixes, detail=detail, dims=dims)


def _narrowed(point: Point, works: Point, ctx: Context) -> tuple[Fix, ...]:
    """The spec cut to ``works`` (from the failing ``point``): one fix for all its dims (a sum
    that must fit keeps both dynamic, each with a narrower range), preferred."""
    sides = {n: "max" if s > (ctx.spec.dims[n].example or 0) else "min" for n, s in point}  # (each has one)
    changes = tuple(
        Change(n, ChangeKind.BOUNDS, min=s if sides[n] == "min" else None, max=s if sides[n] == "max" else None)
        for n, s in works
    )
    if len(changes) == 1:
        return spec_fixes(changes, ctx)
    made = [spec_fix(c, ctx, False) for c in changes]
    parts = [p for p in made if p is not None]
    if len(parts) != len(made):
        return ()
    action = " and ".join(p.action if i == 0 else p.action[:1].lower() + p.action[1:] for i, p in enumerate(parts))
    edits = tuple(e for p in parts for e in p.edits)
    return (Fix(action, edits, preferred=True, rank=Narrowing.RANGE),)


def _refused_on_line(point: Point, exported: str, run: Run) -> Finding | None:
    """EL206 on the line whose guard the program checks and ``point`` breaks (refused.py),
    saying what it refuses in dim names, with the line's alternative: preferred where the guard
    is on how sizes divide (what it refuses recurs across any range, so no range is offered),
    else the widest ranges towards ``point`` that the program runs on (a refused point at
    their edge). None where no logged guard explains the failure."""
    ctx = run.ctx
    sizes = {**run.examples, **dict(point)}
    found = refusal(run.log, ctx, sizes)
    if found is None:
        return None
    at_sizes = ", ".join(f"{n} = {sizes[n]}" for n in ctx.spec.dims)
    edge = edge_bound(found.expr, ctx.built.names.roots) if found.expr is not None else None
    shown = tuple((n, s) for n, s in point if n in found.dims) or point  # (`batch` takes no part in a sum)
    message = (
        f"{_declared(shown, ctx)}, but the exported program {_refuses(found, edge)}"
        f" (at {at_sizes}; eager runs there): this line decided it for the example sizes while exporting"
    )
    fixes: tuple[Fix, ...] = ()
    alternative = flattened(ctx, found)
    if alternative is not None:
        written, edit = alternative
        fixes = (Fix(f"Write `{written}`, which needs no guard on the sizes", (edit,), preferred=found.periodic),)
    refused_at = inputs_with(ctx.spec, sizes, run.rebuild)
    padded = ctx.fix_or("a pad", lambda: block_pad_fix(found.frame, ctx, run.model, dict(point), refused_at), None)
    fixes += (padded,) if padded is not None else ()
    named = tuple(n for n, _ in point)
    concerns = (*named, *(n for n in ctx.spec.dims if n not in named and n in found.dims))
    cut = shared_cut(edge, tuple(n for n, _ in shown), ctx) if edge is not None else None
    if cut is not None:  # the relation's dims cut together, all kept dynamic: a rewrite's backup
        fixes += (replace(cut, preferred=padded is None),)
    if found.periodic or cut is not None:
        return at(ctx, codes.UNSERVED_RANGE, message, found.frame, fixes=fixes, detail=exported, dims=concerns)
    works = _widest(point, lambda b: not failure_of(run.program, b), run)
    if works is not None and any(s != run.examples[n] for n, s in works):  # ranges that leave out the refused edge
        # the range cut is the fix where no rewrite keeps the range (its proof's backup where one does)
        fixes += tuple(replace(f, preferred=padded is None) for f in _narrowed(point, works, ctx))
    return at(ctx, codes.UNSERVED_RANGE, message, found.frame, fixes=fixes, detail=exported, dims=concerns)


def _refuses(found: Refusal, edge: Any) -> str:
    """What the program refuses: where that is a sum only at the box's edge (a slice's end at
    a cache's length), the relation the user keeps, said once (`seq + start_pos <= 63`)."""
    if edge is None:
        return f"refuses sizes where `{found.refused}`"
    beyond = sympy.Eq(edge.lhs, edge.rhs + (1 if isinstance(edge, sympy.Le) else -1))
    return f"requires `{pretty(edge)}`: it refuses sizes where `{pretty(beyond)}`"


def _served(program: Any, model: torch.nn.Module, built: Built) -> bool:
    """Whether eager runs on ``built`` and the program gives its outputs there."""
    return not failure_of(model, built) and not _disagreement(program, model, built)


def _disagreement(program: Any, model: torch.nn.Module, built: Built) -> str:
    """How the program's outputs differ from eager's on ``built`` ("" when they agree)."""
    try:
        return _differs(*_outputs(program, model, built))
    except Exception as exc:  # one side raised on a second run (random inputs): not the same program
        return f"{type(exc).__name__}: {first_line(str(exc))[:300]}"


def _outputs(program: Any, model: torch.nn.Module, built: Built) -> tuple[list[Any], list[Any]]:
    """The program's outputs and eager's on (copies of) ``built``, from the same random draws."""
    out = []
    for fn in (program, model):
        with torch.no_grad():
            torch.manual_seed(0)
            out.append(pytree.tree_leaves(fn(*copied(built.args), **copied(built.kwargs))))
    return out[0], out[1]


def _widest(point: Point, works: Callable[[Built], bool], run: Run) -> Point | None:
    """The point closest to ``point`` (where ``works`` fails) on the line from the examples
    (where it holds) at which it holds; None where inputs on the way cannot be built."""
    steps = span(run.examples, point)
    good, bad = 0, steps
    while bad - good > 1:
        mid = (good + bad) // 2
        built = inputs_with(run.ctx.spec, dict(toward(run.examples, point, mid, steps)), run.rebuild)
        if built is None:
            return None
        if works(built):
            good = mid
        else:
            bad = mid
    return _needed(point, toward(run.examples, point, good, steps), works, run)


def _needed(point: Point, found: Point, works: Callable[[Built], bool], run: Run) -> Point:
    """``found`` with each dim put back at its bound in ``point`` where ``works`` still holds
    so: a corner cuts every dim in proportion, but only those in the failing relation need it
    (`batch` takes no part in `start_pos + seq <= 128`)."""
    out, kept = dict(found), dict[str, int]()
    for name, bound in point:
        if len(out) > 1 and out[name] != bound:
            built = inputs_with(run.ctx.spec, {**out, **kept, name: bound}, run.rebuild)
            if built is not None and works(built):
                del out[name]  # served at its bound: its range stays as declared
                kept[name] = bound
    return tuple(out.items())


def inputs_at(spec: ExportSpec, dim: DimSpec, size: int, rebuild: Rebuild, limit: int = MAX_ELEMENTS) -> Built | None:
    """The example inputs with ``dim`` at ``size`` (the others at their examples); None when
    they would be too large, or cannot be built."""
    return inputs_with(spec, {dim.name: size}, rebuild, limit)


def inputs_with(spec: ExportSpec, sizes: dict[str, int], rebuild: Rebuild, limit: int = MAX_ELEMENTS) -> Built | None:
    """The example inputs with each dim of ``sizes`` at its size (the others at their examples);
    None when they would be too large, or cannot be built."""
    dims = {**spec.dims, **{n: replace(spec.dims[n], example=s) for n, s in sizes.items()}}
    elements = 0
    for value in spec.inputs.values():
        if isinstance(value, TensorInput):
            n = 1
            for s in value.shape.sizes:
                n *= example_size(s, dims) if s != "?" else 1
            elements += n
    if elements > limit:
        return None
    try:
        return rebuild(replace(spec, dims=dims))
    except Exception:
        return None


def failure_of(fn: Callable[..., Any], built: Built, files: Sources | None = None) -> str:
    """What ``fn`` raised on (copies of) the inputs, in one line, with the line of the
    project's files it passed through where ``files`` are given; "" when it ran."""
    return failed_on(fn, built, files)[0]


def failed_on(fn: Callable[..., Any], built: Built, files: Sources | None = None) -> tuple[str, Cause]:
    """``failure_of``, and what the error was (``cause_of``)."""
    try:
        with torch.no_grad():
            fn(*copied(built.args), **copied(built.kwargs))
    except Exception as exc:
        frame = deepest_in_traceback(files, exc.__traceback__) if files else None
        where = f" ({files.rel(frame.filename)}:{frame.line})" if files and frame else ""
        return f"{type(exc).__name__}: {first_line(str(exc))[:300]}{where}", cause_of(exc)
    return "", Cause.NONE


def _on_example(program: Any, model: torch.nn.Module, ctx: Context, said: Said) -> Finding | None:
    """What is wrong with the program on the example inputs, each side run once: it fails,
    or its outputs are not eager's (where eager runs at all). None when it serves them."""
    outputs = []
    for fn in (program, model):
        try:
            with torch.no_grad():
                torch.manual_seed(0)  # the same random draws on both sides
                outputs.append(pytree.tree_leaves(fn(*copied(ctx.built.args), **copied(ctx.built.kwargs))))
        except Exception as exc:
            if fn is model:
                return None  # eager does not run on them either: nothing to compare with
            failed = f"{type(exc).__name__}: {first_line(str(exc))[:300]}"
            if (eager := _raised_eagerly(model, ctx)) is not None:
                return eager
            message = f"the exported program fails on the example inputs it was exported with: {said(failed)}"
            return at(ctx, codes.UNSERVED_RANGE, message, None, detail=failed, cause=cause_of(exc))
    differs = _differs(*outputs)
    message = f"the exported program disagrees with eager on the example inputs: {differs}"
    return at(ctx, codes.UNSERVED_RANGE, message, None) if differs else None


def _raised_eagerly(model: torch.nn.Module, ctx: Context) -> Finding | None:
    """forward raising on the example inputs eagerly too (torch 2.9 exports an embedding of
    float indices, which eager refuses): a bug in the code or the spec, on its line."""
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            model(*copied(ctx.built.args), **copied(ctx.built.kwargs))
    except Exception as exc:
        how = "on the example inputs (and eagerly too: a bug in the code or the spec, not an export problem)"
        message = f"forward raised {type(exc).__name__} {how}: {first_line(str(exc))[:300]}"
        frame = deepest_in_traceback(ctx.sources, exc.__traceback__)
        return at(ctx, codes.FORWARD_FAILED, message, frame, cause=cause_of(exc))
    return None
