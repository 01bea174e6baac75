"""Does the exported program take the values eager takes? (torch side)

torch.export may settle a size computed from tensor values by assuming it: ``counts =
torch.bincount(ids)`` divided by a prior of 8 entries exports with ``counts`` assumed to
have 8 bins, a runtime assertion the program checks on every call. On the example inputs
it holds; on ``ids`` all zeros (one bin, which eager broadcasts) the program refuses what
eager takes. So after an export, the program and eager run on the class's own
``probe_inputs()`` and, where the program holds such assumptions, on the example inputs
filled with zeros and ones: a probe eager takes and the program refuses is EL206, on the
line whose guard made the assumption (logged while exporting: ``locate.GuardLog``).
"""

from __future__ import annotations

from typing import Any

import sympy
import torch

from ...core import codes
from ...core.report import Finding, Fix, Probe, ProbeFill
from ...edit.size_calls import call_named, with_keyword
from ...edit.text_edits import edit_between
from ..compat import messages as forms
from ..compat.internals import pytree
from ..context import Context
from ..inputs import Built, declared_probes
from ..locate import Event, Frame, GuardLog, deepest_in_text
from ..naming.explain import at
from ..naming.guard_ranges import finite
from ..naming.symbols import SYMBOL, pretty
from ..reading.refused import refusal, size_of
from .probes import inputs_of
from .serving import Rebuild, failure_of

# run where the program assumes something of values
FILLS = (Probe("zeros", ProbeFill.ZEROS), Probe("ones", ProbeFill.ONES))


def refused_values(
    ep: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, device: str, log: GuardLog | None
) -> Finding | None:
    """EL206 for the first probe eager takes and the program refuses; None where there is none."""
    if device == "meta":
        return None
    assumes = any(str(s).startswith("u") for s in getattr(ep, "range_constraints", {}))
    probes = (*declared_probes(ctx.built), *(FILLS if assumes else ()))
    program = None
    for probe in probes:
        inputs = inputs_of(probe, ctx.built, ctx.spec, rebuild)
        if inputs is None or not _declared_shapes(inputs, ctx) or failure_of(model, inputs):
            continue
        program = program or ep.module()
        failed = failure_of(program, inputs)
        if failed:
            return _refused(ep, failed, probe, inputs, ctx, log)
    return None


def _declared_shapes(inputs: Built, ctx: Context) -> bool:
    """Whether the probe's tensors have the shapes the spec declares: a named axis inside its
    dim's range, any other the example's size (a probe outside them is not the program's to take)."""
    leaves = pytree.tree_leaves((inputs.args, inputs.kwargs))
    examples = pytree.tree_leaves((ctx.built.args, ctx.built.kwargs))
    if len(leaves) != len(examples) or not _related(inputs, ctx):
        return False
    for path, got, want in zip(ctx.built.paths(), leaves, examples):
        if not isinstance(want, torch.Tensor):
            continue
        if not isinstance(got, torch.Tensor) or got.dim() != want.dim():
            return False
        named = ctx.built.names.by_input.get(path, {})
        for axis, (a, b) in enumerate(zip(got.shape, want.shape)):
            if a != b if axis not in named else not _inside(a, ctx.built.names.roots.get(named[axis])):
                return False
    return True


def _refused(ep: Any, failed: str, probe: Probe, inputs: Built, ctx: Context, log: GuardLog | None) -> Finding:
    """The refusal on the line that made the assumption, said over what the user wrote."""
    example = _described(probe, inputs)
    assumption = _assumption(failed, log)
    if assumption is None:
        found = refusal(log, ctx, _sizes(inputs, ctx)) if log is not None else None
        frame, refused = (found.frame, f"`{found.refused}`") if found else (None, "")
        where = f" where {refused}" if refused else ""
        message = (
            f"the exported program refuses inputs{where}, e.g. {example}, which eager takes: {SYMBOL.sub('?', failed)}"
        )
        return at(ctx, codes.UNSERVED_RANGE, message, frame, detail=failed)
    event, sym = assumption
    call, axis, made_at = _made_by(ep, sym, ctx)
    size = f"{call}.shape[{axis}]" if call else "a size computed from tensor values"
    said = pretty(event.expr, {sym: size})
    bins = call is not None and ".bincount(" in f".{call}" and isinstance(event.expr, sympy.Eq)
    value = event.expr.rhs if bins and event.expr.lhs == sym else event.expr.lhs if bins else None
    negated = event.expr.negated if isinstance(event.expr, sympy.Rel) else sympy.Not(event.expr)
    refused = f"`{call}` has other than {value} bins" if value is not None else f"`{pretty(negated, {sym: size})}`"
    message = (
        f"the exported program refuses inputs where {refused}, e.g. {example}, which eager takes:"
        f" torch.export assumed `{said}` for this line while exporting"
    )
    fixes = _minlength(made_at, value, ctx) if value is not None and made_at is not None else ()
    return at(ctx, codes.UNSERVED_RANGE, message, event.frame, fixes=fixes, detail=failed)


def _assumption(failed: str, log: GuardLog | None) -> tuple[Event, sympy.Symbol] | None:
    """The logged guard over the value-made size whose runtime assertion failed, and its symbol."""
    m = forms.ASSERTION.search(failed)
    if m is None or log is None:
        return None
    symbols = set(SYMBOL.findall(m[1]))
    for event in log.events:
        mine = [s for s in event.expr.free_symbols if str(s) in symbols]
        if event.kind == "guard" and event.frame is not None and len(event.expr.free_symbols) == 1 and mine:
            return event, mine[0]
    return None


def _made_by(ep: Any, sym: sympy.Symbol, ctx: Context) -> tuple[str | None, int, Frame | None]:
    """The call whose result has ``sym`` as a size (``torch.bincount(ids)``), as its line
    writes it, which axis, and that line; (None, 0, None) where no node of the program says."""
    for node in ep.graph.nodes:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or node.op != "call_function":
            continue
        axes = [
            i
            for i, s in enumerate(val.shape)
            if isinstance(s, torch.SymInt) and str(getattr(s.node, "_expr", s.node.expr)) == str(sym)
        ]
        frame = deepest_in_text(ctx.sources, node.meta.get("stack_trace"))
        if not axes or frame is None:
            continue
        op = getattr(node.target, "__name__", str(node.target)).split(".")[0]
        call = call_named(ctx.read(ctx.sources.rel(frame.filename)), frame.line, op)
        return call, axes[0], frame if call else None
    return None, 0, None


def _minlength(frame: Frame, value: Any, ctx: Context) -> tuple[Fix, ...]:
    """``torch.bincount(ids, minlength=8)``: always that many bins. Not preferred: where eager
    gets fewer, what it computes with them (a broadcast, an error) is not what the fix gives."""
    path = ctx.sources.rel(frame.filename)
    text = ctx.read(path)
    rewritten = with_keyword(text, frame.line, "bincount", "minlength", int(value))
    edit = edit_between(path, text, rewritten[0]) if rewritten else None
    if edit is None or rewritten is None:
        return ()
    title = (
        f"Write `{rewritten[1]}`, which always has {value} bins"
        " (where eager's has fewer, what the model computes changes)"
    )
    return (Fix(title, (edit,)),)


def _described(probe: Probe, inputs: Built) -> str:
    """``ids` all zeros`` where every tensor input holds one value; else the probe's name."""
    leaves = [
        (p, t)
        for p, t in zip(inputs.paths(), pytree.tree_leaves((inputs.args, inputs.kwargs)))
        if isinstance(t, torch.Tensor)
    ]
    values = {t.flatten()[0].item() for _, t in leaves if t.numel() and bool((t == t.flatten()[0]).all())}
    if not leaves or len(values) != 1 or any(not t.numel() or not bool((t == t.flatten()[0]).all()) for _, t in leaves):
        return f"{probe.name}" if probe.fill is ProbeFill.DECLARED else f"the example inputs filled with {probe.name}"
    (value,) = values
    said = "zeros" if value == 0 else "ones" if value == 1 else f"{value:g}s"
    names = " and ".join(f"`{p}`" for p, _ in leaves)
    return f"{names} all {said}" + (f" ({probe.name})" if probe.fill is ProbeFill.DECLARED else "")


def _inside(size: int, root: Any) -> bool:
    """Whether ``size`` is in a root Dim's range (a derived size: ``_related`` says)."""
    if root is None:
        return True
    lo, hi = getattr(root, "min", 0), getattr(root, "max", None)
    return size >= (lo if finite(lo) else 0) and (not finite(hi) or size <= hi)


def _related(inputs: Built, ctx: Context) -> bool:
    """Whether the probe's sizes keep the spec's relations: one size for each name (``new =
    seq``), and a derived one (``seq + 1``) its root's expression."""
    roots, seen = _sizes(inputs, ctx), dict[str, int]()
    for path, value in zip(inputs.paths(), pytree.tree_leaves((inputs.args, inputs.kwargs))):
        for axis, name in ctx.built.names.by_input.get(path, {}).items():
            if isinstance(value, torch.Tensor) and axis < value.dim():
                size = int(value.shape[axis])
                if seen.setdefault(name, size) != size or size_of(name, roots) not in (None, size):
                    return False
    return True


def _sizes(inputs: Built, ctx: Context) -> dict[str, int]:
    """Each root dim's size in ``inputs``, read from the axes its name marks."""
    out: dict[str, int] = {}
    for path, value in zip(inputs.paths(), pytree.tree_leaves((inputs.args, inputs.kwargs))):
        for axis, name in ctx.built.names.by_input.get(path, {}).items():
            if name in ctx.built.names.roots and isinstance(value, torch.Tensor) and axis < value.dim():
                out[name] = int(value.shape[axis])
    return out
