"""Does the exported program serve what the spec declares? (torch side)

torch proves the graph valid for every size in the declared ranges, but not that
the model is: an embedding table of 128 positions under ``seq`` declared up to
1024 exports, and its program fails at seq 200, as eager does. So after a
successful export, run the program and eager on the example inputs (they must
agree), then eager and the program at each dim's bounds written in the spec, one dim
at a time (skipped on ``meta`` and for inputs over ``MAX_ELEMENTS``). A bound
where the model fails is EL206, with the widest range that works (found by
bisection between the example and the bound) as the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ..core import codes
from ..core.report import Finding, Fix
from ..core.sources import Sources
from ..spec.loading import DimSpec, ExportSpec, TensorInput
from ..spec.module_spec import example_size
from .compat import messages as forms
from .compat.internals import pytree
from .context import Context
from .explain import at
from .fixes import spec_fixes
from .holds import finite
from .inputs import Built, copied
from .locate import GuardLog, deepest_in_traceback
from .refused import flattened, refusal
from .summary import in_user_names
from .violations import Change, ChangeKind, first_line

MAX_ELEMENTS = 1 << 26  # of all inputs at one bound (256 MiB of float32): larger bounds are not run


Rebuild = Callable[[ExportSpec], Built]  # the example inputs of another spec (other example sizes)
Said = Callable[[str], str]  # the program's text in the user's names (summary.in_user_names)


def serving_findings(
    ep: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, device: str, log: GuardLog | None = None
) -> list[Finding]:
    """What the exported program cannot serve: the example inputs, or a declared bound
    (a size the program refuses on the line whose guard refuses it, from ``log``)."""
    if device == "meta":
        return []  # no values to run on
    program = ep.module()
    said = in_user_names(ep, ctx)
    on_example = _on_example(program, model, ctx, said)
    if on_example is not None:
        return [on_example]
    if ctx.spec.source != "pyproject":
        return []  # example_inputs() has one size per axis
    out = []
    for dim in ctx.spec.dims.values():
        finding = _bounds(dim, program, model, ctx, rebuild, said, log)
        if finding is not None:
            out.append(finding)
    return out


def _bounds(
    dim: DimSpec, program: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, said: Said, log: GuardLog | None
) -> Finding | None:
    root = ctx.built.names.roots.get(dim.name)
    if root is None:
        return None
    example = example_size(dim.name, ctx.spec.dims)
    for bound, side in ((dim.max, "max"), (dim.min, "min")):  # the bounds the user wrote, not torch's defaults
        if bound is None or not finite(bound) or bound == example:
            continue
        built = inputs_at(ctx.spec, dim, bound, rebuild)
        if built is None:
            continue
        eager = failure_of(model, built, ctx.sources)
        exported = None if eager else failure_of(program, built)
        if forms.ASSUMED.search(eager or exported or ""):
            continue  # a value the user assumed (torch._check on data) need not hold on random inputs
        differs = "" if eager or exported else _disagreement(program, model, built)
        if not (eager or exported or differs):
            continue
        declared = f"[{root.min if finite(root.min) else 0}, {root.max if finite(root.max) else '∞'}]"
        if exported:
            placed = _refused_on_line(dim, bound, declared, exported, program, ctx, rebuild, log)
            if placed is not None:
                return placed
        return _unserved(dim, (bound, side), declared, (eager, exported, differs), program, model, ctx, rebuild, said)
    return None


def _unserved(
    dim: DimSpec,
    at: tuple[int, str],
    declared: str,
    failures: tuple[str | None, str | None, str],
    program: Any,
    model: torch.nn.Module,
    ctx: Context,
    rebuild: Rebuild,
    said: Said,
) -> Finding:
    """EL206 on the dim's spec line: what fails at ``at`` (the bound, and which side of the
    range it is), with the widest range that serves where eager fails or the outputs differ."""
    (bound, side), (eager, exported, differs) = at, failures
    if eager:
        why = f"forward fails: {eager}"
    elif exported:
        why = f"the exported program fails where eager does not: {said(exported)}"
    else:
        why = f"the exported program's outputs are not eager's ({differs}): torch assumed a size it does not have there"
    message = f"`{dim.name}` is declared as {declared}, but at {dim.name} = {bound} {why}"
    fixes = ()
    if eager or differs:
        example = example_size(dim.name, ctx.spec.dims)
        works = _widest(dim, example, bound, lambda b: _served(program, model, b), ctx.spec, rebuild)
        if works is not None:
            fixes = spec_fixes((Change(dim.name, ChangeKind.BOUNDS, **{side: works}),), ctx)
    key = f"dims.{dim.name}" if f"dims.{dim.name}" in ctx.spec.locations else None
    loc = ctx.spec.where(key) if key else ctx.spec.location
    return codes.finding_at(
        codes.UNSERVED_RANGE,
        message,
        loc.path,
        loc.span,
        fixes=fixes,
        detail=eager or exported or differs,
        dims=(dim.name,),
    )


def _refused_on_line(
    dim: DimSpec,
    bound: int,
    declared: str,
    exported: str,
    program: Any,
    ctx: Context,
    rebuild: Rebuild,
    log: GuardLog | None,
) -> Finding | None:
    """EL206 on the line whose guard the program checks and ``bound`` breaks (refused.py),
    saying what it refuses in dim names, with the line's alternative: preferred where the guard
    is on how sizes divide (what it refuses recurs across any range, so no range is offered),
    else the widest range up to the bound that the program runs on (a refused point at its edge).
    None where no logged guard explains the failure."""
    dims = {**ctx.spec.dims, dim.name: replace(dim, example=bound)}
    found = refusal(log, ctx, {name: example_size(name, dims) for name in ctx.spec.dims})
    if found is None:
        return None
    at_sizes = ", ".join(f"{n} = {example_size(n, dims)}" for n in ctx.spec.dims)
    message = (
        f"`{dim.name}` is declared as {declared}, but the exported program refuses sizes where `{found.refused}`"
        f" (at {at_sizes}; eager runs there): this line decided it for the example sizes while exporting"
    )
    fixes: tuple[Fix, ...] = ()
    alternative = flattened(ctx, found)
    if alternative is not None:
        written, edit = alternative
        fixes = (Fix(f"Write `{written}`, which needs no guard on the sizes", (edit,), preferred=found.periodic),)
    concerns = (dim.name, *(n for n in ctx.spec.dims if n != dim.name and n in found.dims))
    if found.periodic:
        return at(ctx, codes.UNSERVED_RANGE, message, found.frame, fixes=fixes, detail=exported, dims=concerns)
    example = example_size(dim.name, ctx.spec.dims)
    works = _widest(dim, example, bound, lambda b: not failure_of(program, b), ctx.spec, rebuild)
    if works is not None and works != example:  # a range that leaves out the refused edge
        side = "max" if bound > example else "min"
        fixes += tuple(
            replace(f, preferred=True) for f in spec_fixes((Change(dim.name, ChangeKind.BOUNDS, **{side: works}),), ctx)
        )
    return at(ctx, codes.UNSERVED_RANGE, message, found.frame, fixes=fixes, detail=exported, dims=concerns)


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


def _widest(
    dim: DimSpec, good: int, bad: int, works: Callable[[Built], bool], spec: ExportSpec, rebuild: Rebuild
) -> int | None:
    """The size closest to ``bad`` where ``works`` holds, from ``good`` (where it does)."""
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        built = inputs_at(spec, dim, mid, rebuild)
        if built is None:
            return None
        if works(built):
            good = mid
        else:
            bad = mid
    return good


def inputs_at(spec: ExportSpec, dim: DimSpec, size: int, rebuild: Rebuild, limit: int = MAX_ELEMENTS) -> Built | None:
    """The example inputs with ``dim`` at ``size`` (the others at their examples); None when
    they would be too large, or cannot be built."""
    dims = {**spec.dims, dim.name: replace(dim, example=size)}
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
    try:
        with torch.no_grad():
            fn(*copied(built.args), **copied(built.kwargs))
    except Exception as exc:
        frame = deepest_in_traceback(files, exc.__traceback__) if files else None
        where = f" ({files.rel(frame.filename)}:{frame.line})" if files and frame else ""
        return f"{type(exc).__name__}: {first_line(str(exc))[:300]}{where}"
    return ""


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
            return at(ctx, codes.UNSERVED_RANGE, message, None, detail=failed)
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
        return at(ctx, codes.FORWARD_FAILED, message, deepest_in_traceback(ctx.sources, exc.__traceback__))
    return None


def _differs(got: list[Any], want: list[Any]) -> str:
    """How the program's outputs differ from eager's ("" when they agree)."""
    if len(want) != len(got):
        return f"{len(got)} outputs, eager has {len(want)}"
    for i, (a, b) in enumerate(zip(want, got)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            try:
                torch.testing.assert_close(b, a, equal_nan=True)
            except AssertionError as e:
                return f"output {i}: {first_line(str(e))}"
    return ""
