"""Does the lowered artifact answer as eager does? (torch side)

Each artifact runs beside the module as the user wrote it on the example inputs and at
each declared dim's min and max (inside the range: it must run and agree), and one past
each (outside: a runtime that does not check the range accepts it, and where eager fails
or answers otherwise there, a server would serve garbage). Inputs larger than
``serving.MAX_ELEMENTS`` are not run. Eager runs in the job's process (``eager_probes``),
the artifact in the lowering process (``run_probe``), on the inputs eager ran on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ...spec.loading import DimSpec, SpecSource
from ...spec.module_spec import example_size
from ..compat.internals import pytree
from ..context import Context
from ..inputs import copied
from ..naming.guard_ranges import finite
from ..proving.serving import Rebuild, inputs_at
from ..reading.violations import first_line
from .artifact import Artifact, Refused
from .handoff import Probe, Ran

RTOL, ATOL = 1e-3, 1e-4  # a compiler's own reordering of float sums stays well inside these


@dataclass(frozen=True)
class Size:
    """One set of inputs: the examples, or one dim at another size."""

    dim: DimSpec | None  # None: the example inputs
    size: int = 0
    inside: bool = True  # within the declared range
    near: bool = False  # next to a bound: measured only to narrow the range where the bound is refused

    def __str__(self) -> str:
        return "the example inputs" if self.dim is None else f"{self.dim.name} = {self.size}"


@dataclass(frozen=True)
class Compared:
    size: Size
    refused: str = ""  # what the artifact raised, where eager runs
    stack: str = ""  # the user's stack of the node it raised on, where its runtime says
    differs: str = ""  # how its outputs differ from eager's
    error: float | None = None  # max |artifact - eager| where both ran
    eager_failed: str = ""  # what eager raised (outside the range: the artifact should not answer either)


def sizes(ctx: Context) -> Iterator[Size]:
    yield Size(None)
    if ctx.spec.source is not SpecSource.PYPROJECT:
        return  # example_inputs() has one size per axis
    for dim in ctx.spec.dims.values():
        example = example_size(dim.name, ctx.spec.dims)
        low = dim.min if dim.min is not None and finite(dim.min) else None
        high = dim.max if dim.max is not None and finite(dim.max) else None
        for size, inside in ((low, True), (high, True)):
            if size is not None and size != example:
                yield Size(dim, size, inside)
        yield from _near(dim, low, high, example)
        if low is not None and low - 1 >= 1:
            yield Size(dim, low - 1, False)
        if high is not None:
            yield Size(dim, high + 1, False)


def _near(dim: DimSpec, low: int | None, high: int | None, example: int) -> Iterator[Size]:
    """One inside each finite bound, where it is neither the example nor the other bound."""
    for size in dict.fromkeys((low + 1 if low is not None else None, high - 1 if high is not None else None)):
        if size is not None and size not in (example, low, high) and (low or 0) <= size <= (high or size):
            yield Size(dim, size, near=True)


def eager_probes(model: torch.nn.Module, ctx: Context, rebuild: Rebuild) -> tuple[list[Size], list[Probe], list[str]]:
    """Each size that can be built, its inputs and eager's outputs there, and what eager raised ("" where it ran)."""
    at, probes, failed = [], [], []
    for size in sizes(ctx):
        built = ctx.built if size.dim is None else inputs_at(ctx.spec, size.dim, size.size, rebuild)
        if built is None:
            continue
        outputs, raised, _ = _outputs(model, built.args, built.kwargs)
        at.append(size)
        tensors = [o for o in outputs if isinstance(o, torch.Tensor)]  # what is compared, and all that is handed over
        probes.append(Probe(built.args, built.kwargs, None if raised else tensors))
        failed.append(raised)
    return at, probes, failed


def run_probe(artifact: Artifact, probe: Probe) -> Ran | None:
    """The artifact at one probe; None where eager raised there and so did it."""
    got, refused, stack = _outputs(artifact.run, probe.args, probe.kwargs)
    if probe.outputs is None:
        return None if refused else Ran()
    if refused:
        return Ran(refused=refused, stack=stack)
    differs, error = _differs(got, probe.outputs)
    return Ran(differs=differs, error=error)


def compared(size: Size, ran: Ran | None, eager_failed: str) -> Compared | None:
    """What the lowering process said of one probe, beside what eager did there."""
    if ran is None:
        return None
    if eager_failed:
        return Compared(size, eager_failed=eager_failed)
    return Compared(size, refused=ran.refused, stack=ran.stack, differs=ran.differs, error=ran.error)


def _outputs(fn: Any, args: Any, kwargs: Any) -> tuple[list[Any], str, str]:
    """Its outputs, or what it raised (and the user's stack where the artifact's runtime names one)."""
    try:
        with torch.no_grad():
            torch.manual_seed(0)  # the same random draws on both sides
            return pytree.tree_leaves(fn(*copied(args), **copied(kwargs))), "", ""
    except Refused as exc:
        return [], str(exc), exc.stack
    except Exception as exc:
        return [], f"{type(exc).__name__}: {first_line(str(exc))[:300]}", ""


def _differs(got: list[Any], want: list[Any]) -> tuple[str, float | None]:
    """How ``got`` differs from ``want`` ("" where it agrees), and the largest absolute error."""
    want = [w for w in want if isinstance(w, torch.Tensor)]
    got = [g if isinstance(g, torch.Tensor) else torch.as_tensor(g) for g in got]
    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}", None
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {i} has shape {list(g.shape)}, eager's {list(w.shape)}", None
        g, w = g.detach().to(w.device), w.detach()
        if w.is_floating_point() or w.is_complex():
            error = float((g.to(w.dtype) - w).abs().max()) if w.numel() else 0.0
            worst = max(worst, error)
            if not torch.allclose(g.to(w.dtype), w, rtol=RTOL, atol=ATOL, equal_nan=True):
                return f"output {i} differs by up to {error:.3g}", error
        elif not torch.equal(g.to(w.dtype), w):
            return f"output {i} has other values", None
    return "", worst
