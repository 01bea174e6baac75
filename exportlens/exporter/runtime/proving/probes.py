"""Probe inputs: where a fix's exported program must agree with the module as written (torch side).

The example inputs take one side of each data-dependent branch, so a fix that keeps only
that side (``torch._check(routed <= 0)``) exports, and runs on them, while the program
it gives rejects every input that takes the other side. A fix is only as good as the
inputs it was tried on: so besides the example inputs, the check that meets such a
branch looks for inputs that take its other side, among the example inputs with other
values (zeros, ones, negated, scaled up, drawn again with other seeds), and names them
on each fix (``probe_set``). The owner's proof of the fix (workers/proofs.py) then runs
the module as the user wrote it on them (``on_eager``), exports with the fix applied,
runs that program on the same inputs, and says on each probe whether they agree
(``compared``).
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from ...core.options import Options, Task
from ...core.report import DimSize, Finding, Fix, Narrowing, Probe, ProbeFill
from ...edit.at_line import branch_test, tensor_test
from ...edit.item_reads import int_as_item
from ...spec.loading import ExportSpec, SpecSource
from ...workers.overlay import overlay
from ..compat.internals import pytree
from ..context import Context
from ..fixing.fixes import torch_check_candidates
from ..fixing.remedies import EXAMPLE
from ..inputs import Built, copied, declared_probes
from ..locate import Frame
from ..naming.guard_ranges import finite
from ..reading.branch import truth_at, value_at
from ..reading.failures import DataDependent, Record
from ..reading.violations import first_line
from .rewritten import keeps_results
from .serving import Rebuild, _differs, failure_of, inputs_at

# values varied first: all zeros or all ones may take the other side of a branch and still
# hide what it changes (``x * 2`` and ``x`` agree on zeros)
FILLS = (
    Probe("negated values", ProbeFill.NEGATIVE),
    Probe("values scaled up", ProbeFill.LARGE),
    *(Probe(f"random values (seed {seed})", ProbeFill.RANDOM, seed) for seed in (1, 2, 3)),
    Probe("ones", ProbeFill.ONES),
    Probe("zeros", ProbeFill.ZEROS),
    # a mask cleared or set with the values beside it drawn: ``if not mask.any(): return x``
    # takes its early return there without the zeros that make ``x * 2`` and ``x`` agree
    Probe("masks cleared", ProbeFill.CLEARED),
    Probe("masks set", ProbeFill.SET),
)
OTHER_SIDE = 2  # inputs kept for each branch that take the side the example does not
ALWAYS = 2  # random draws every probe set holds, beside the example and the other sides
INTEGER_SCALE = 8  # integers scaled up: far enough past a small example's values, seldom a huge allocation
MAX_ELEMENTS = 1 << 22  # of all inputs of a probe at a bound (16 MiB of float32): larger bounds are not probed


def candidates(spec: ExportSpec, built: Built | None = None) -> tuple[Probe, ...]:
    """Other values, then random values at each declared bound of each dim (a spec of
    pyproject.toml's: ``example_inputs()`` has one size per axis), then the inputs of the
    class's own ``probe_inputs()``."""
    bounds = list(declared_probes(built)) if built is not None else []
    if spec.source is SpecSource.PYPROJECT:
        for dim in spec.dims.values():
            for bound in dict.fromkeys(b for b in (dim.min, dim.max) if b is not None and finite(b)):
                at = (DimSize(dim.name, bound),)
                bounds.append(Probe(f"random values at {dim.name} = {bound}", ProbeFill.RANDOM, 1, at))
    return (*FILLS, *bounds)


def inputs_of(probe: Probe, built: Built, spec: ExportSpec, rebuild: Rebuild) -> Built | None:
    """The example inputs with the probe's sizes and values: floating-point tensors filled as
    it says, integer ones (token ids, indices, positions) drawn again within the example's
    own values, negated, or scaled by 8 (positions past a table's end, longer lengths; ids
    out of a vocabulary fail eager, and such a probe is not used). None where they cannot
    be built, or would be too large."""
    if probe.fill is ProbeFill.DECLARED:  # the class's own inputs, as its probe_inputs() builds them
        declared = built.declared()
        return declared[probe.seed] if 0 <= probe.seed < len(declared) else None
    for size in probe.sizes:
        dim = spec.dims.get(size.dim)
        resized = inputs_at(spec, dim, size.size, rebuild, MAX_ELEMENTS) if dim is not None else None
        if resized is None:
            return None
        built = resized
    torch.manual_seed(probe.seed)

    def fill(t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or probe.fill is ProbeFill.EXAMPLE or t.numel() == 0:
            return t.clone() if isinstance(t, torch.Tensor) else t
        if t.dtype.is_floating_point:
            return _filled(t, probe.fill)
        if probe.fill is ProbeFill.RANDOM and t.dtype != torch.bool:
            return torch.randint(int(t.min()), int(t.max()) + 1, t.shape, dtype=t.dtype, device=t.device)
        if probe.fill in (ProbeFill.ZEROS, ProbeFill.ONES, ProbeFill.CLEARED, ProbeFill.SET):
            return torch.zeros_like(t) if probe.fill in (ProbeFill.ZEROS, ProbeFill.CLEARED) else torch.ones_like(t)
        if probe.fill is ProbeFill.LARGE and t.dtype != torch.bool:
            return t * INTEGER_SCALE
        if probe.fill is ProbeFill.NEGATIVE and t.dtype.is_signed:
            return -t
        return t.clone()

    return replace(built, args=pytree.tree_map(fill, built.args), kwargs=pytree.tree_map(fill, built.kwargs))


def _filled(t: torch.Tensor, how: ProbeFill) -> torch.Tensor:
    if how is ProbeFill.ZEROS:
        return torch.zeros_like(t)
    if how is ProbeFill.ONES:
        return torch.ones_like(t)
    if how is ProbeFill.NEGATIVE:
        return -t
    if how is ProbeFill.LARGE:
        return t * 1000
    return torch.randn_like(t)


# -- in the check: which inputs take the other side ---------------------------------


def with_probe_set(
    findings: list[Finding], records: tuple[Record, ...], model: torch.nn.Module, ctx: Context, rebuild: Rebuild
) -> list[Finding]:
    """The findings, each fix that carries the example probe (a remedy of a data-dependent
    branch: remedies.py) given the module's whole probe set."""
    if not any(fix.probes for f in findings for fix in f.fixes):
        return findings
    branches = [
        (r.frame, code) for r in records if isinstance(r, DataDependent) and r.frame and (code := _test(r, ctx))
    ]
    branches += _found_by_draft(findings, {(f.filename, f.line) for f, _ in branches}, ctx)
    branches += _values_read(records, model, ctx)
    build = lambda probe: inputs_of(probe, ctx.built, ctx.spec, rebuild)  # noqa: E731
    try:
        probes = probe_set(model, ctx.built, branches, build, candidates(ctx.spec, ctx.built))
        inputs = [i for i in map(build, probes) if i is not None]
    except Exception:  # a probe that cannot be built is no reason to lose the finding
        probes, inputs = (EXAMPLE,), [ctx.built]
    return [
        _kept(
            replace(f, fixes=tuple(replace(x, probes=_with_own(probes, x.probes)) if x.probes else x for x in f.fixes)),
            model,
            ctx,
            inputs,
        )
        for f in findings
    ]


def _kept(finding: Finding, model: torch.nn.Module, ctx: Context, inputs: list[Built]) -> Finding:
    """The finding without the branch-free forms that change eager's results on the probes
    (rewritten.py); the first remedy left is the one to try first, where the dropped one was."""
    dropped = [f for f in finding.fixes if f.rank is Narrowing.BRANCH_FREE and _changes_results(f, model, ctx, inputs)]
    if not dropped:
        return finding
    fixes = [f for f in finding.fixes if f not in dropped]
    if any(f.preferred for f in dropped) and not any(f.preferred for f in fixes):
        first = next((i for i, f in enumerate(fixes) if f.probes), None)
        fixes = [replace(f, preferred=i == first) for i, f in enumerate(fixes)]
    return replace(finding, fixes=tuple(fixes))


def _changes_results(fix: Fix, model: torch.nn.Module, ctx: Context, inputs: list[Built]) -> bool:
    try:
        return keeps_results(model, fix, str(ctx.root), ctx.read(fix.edits[0].path), inputs) is False
    except Exception:  # not known here: the owner's proof says it
        return False


def _found_by_draft(findings: list[Finding], known: set[tuple[str, int]], ctx: Context) -> list[tuple[Frame, str]]:
    """The other branches the check reports (draft export's, whose records stay in ``run``),
    each with its test as its line writes it."""
    out = []
    for f in findings:
        filename = str(ctx.root / f.path)
        if f.code != "EL101" or (filename, f.line) in known:
            continue
        text = ctx.read(f.path)
        test = branch_test(text, f.line) or tensor_test(text, f.line)
        if test is not None:
            out.append((Frame(filename, f.line, ""), test if isinstance(test, str) else test.test))
            known.add((filename, f.line))
    return out


def _values_read(records: tuple[Record, ...], model: torch.nn.Module, ctx: Context) -> list[tuple[Frame, str]]:
    """Each ``int(<tensor>)`` a fix reads with ``.item()`` (edit.item_reads), as the test that
    its value is the example's (``y.argmax().item() == 0``): probes that give it another value
    are where a fix that pins it (``torch._check(best == 0)``) shows what it assumes."""
    out = []
    for r in records:
        if not isinstance(r, DataDependent) or r.frame is None or not r.tensors:
            continue
        read = int_as_item(ctx.read(ctx.sources.rel(r.frame.filename)), r.frame.line, r.tensors)
        value = value_at(model, ctx.built, r.frame, read.item) if read is not None else None
        if read is not None and isinstance(value, (bool, int, float)) and value == value:  # (nan: no value to compare)
            out.append((r.frame, f"{read.item} == {value!r}"))
    return out


def _test(record: DataDependent, ctx: Context) -> str | None:
    """The branch's condition as code to evaluate in its frame: a candidate of its
    ``torch._check``, else the test as the line writes it (``h.sum() > 4``)."""
    written = torch_check_candidates(record, ctx)
    if written or record.frame is None:
        return written[0] if written else None
    text = ctx.read(ctx.sources.rel(record.frame.filename))
    test = branch_test(text, record.frame.line) or tensor_test(text, record.frame.line)
    return test if isinstance(test, str) or test is None else test.test


def _with_own(probes: tuple[Probe, ...], own: tuple[Probe, ...]) -> tuple[Probe, ...]:
    """The module's probe set, and a fix's own probes at other sizes (``at batch = 4``, where a
    line pins it and the module as written runs only there)."""
    return probes + tuple(p for p in own if p.sizes and p not in probes)


def probe_set(
    model: torch.nn.Module,
    built: Built,
    branches: list[tuple[Frame, str]],
    build: Callable[[Probe], Built | None],
    found: tuple[Probe, ...],
) -> tuple[Probe, ...]:
    """The example inputs; for each branch (its line, and its condition as code) whose side on
    them is known, the first candidates on which eager runs and takes the other side; a few
    random draws, and the declared bounds, where eager runs on them."""
    chosen = [EXAMPLE]
    runs = {}  # probe -> its inputs, where eager runs on them (None where it does not)

    def usable(probe: Probe) -> Built | None:
        if probe not in runs:
            inputs = build(probe)
            runs[probe] = inputs if inputs is not None and not failure_of(model, inputs) else None
        return runs[probe]

    for frame, code in branches:
        (truth,) = truth_at(model, built, frame, (code,))
        if truth is None:
            continue
        others = (
            p for p in found if (i := usable(p)) is not None and truth_at(model, i, frame, (code,)) == (not truth,)
        )
        chosen += [p for p in itertools.islice(others, OTHER_SIDE) if p not in chosen]
    always = [p for p in found if p.fill is ProbeFill.RANDOM and not p.sizes][:ALWAYS] + [
        p for p in found if p.sizes or p.fill is ProbeFill.DECLARED
    ]
    chosen += [p for p in always if p not in chosen and usable(p) is not None]
    return tuple(chosen)


# -- in the proof: the module as written, then the fixed program -------------------


@dataclass
class Reference:
    """Eager's answer on each probe: its outputs, or what it raised (nothing to compare then)."""

    runs: list[tuple[Probe, Built | None, list[Any] | str]]


def on_eager(
    task: Task,
    options: Options,
    root: Path,
    prepare: Callable[[], tuple[Any, Any, Built]],
    spec: ExportSpec,
    rebuild_of: Callable[[type], Rebuild],
) -> Reference | None:
    """A proof's probes (its options') run on the module as the user wrote it: their
    ``eager_sources`` (project-relative path -> text) are imported in place of the fixed files
    while ``prepare`` builds it. None for a job that is no proof, a proof of a fix with no
    probes, or a module that cannot be built (the proof then says nothing of probes)."""
    if task is not Task.PROVE or not options.probes:
        return None
    paths = {str(root / path): text for path, text in options.eager_sources.items()}
    try:
        with overlay({Path(p): t for p, t in paths.items()}):
            cls, model, built = prepare()
            rebuild = rebuild_of(cls)
            runs = []
            for probe in options.probes:
                inputs = inputs_of(probe, built, spec, rebuild)
                runs.append(
                    (probe, inputs, _outputs(model, inputs) if inputs is not None else "its inputs cannot be built")
                )
            return Reference(runs)
    except Exception:
        return None
    finally:
        _forget(paths)


def _forget(paths: dict[str, str]) -> None:
    """Drop the modules imported from the texts as written: the fixed ones are imported next."""
    for name, mod in list(sys.modules.items()):
        if os.path.abspath(getattr(mod, "__file__", None) or "") in paths:
            del sys.modules[name]


def _outputs(fn: Callable[..., Any], built: Built) -> list[Any] | str:
    try:
        with torch.no_grad():
            torch.manual_seed(0)  # the same random draws on both sides
            return pytree.tree_leaves(fn(*copied(built.args), **copied(built.kwargs)))
    except Exception as exc:
        return f"{type(exc).__name__}: {first_line(str(exc))[:300]}"


def compared(program: Callable[..., Any], reference: Reference) -> tuple[Probe, ...]:
    """Each probe with whether ``program`` gives eager's outputs on it."""
    out = []
    for probe, inputs, want in reference.runs:
        if isinstance(want, str) or inputs is None:
            out.append(replace(probe, agrees=None, said=f"eager fails on them too: {want}"))
            continue
        got = _outputs(program, inputs)
        if isinstance(got, str):
            said = (
                "a runtime assertion fails" if "Runtime assertion failed" in got else got
            )  # (torch's own symbols: u0)
            out.append(replace(probe, agrees=False, rejected=True, said=f"the exported program rejects them: {said}"))
        elif differs := _differs(got, want):
            out.append(replace(probe, agrees=False, said=f"the exported program's outputs are not eager's: {differs}"))
        else:
            out.append(replace(probe, agrees=True))
    return tuple(out)
