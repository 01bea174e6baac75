"""Check a plan's modules in isolated workers, in parallel (no torch: the owner's side)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from ..core.options import Options
from ..core.report import ModuleReport, Report, Status
from ..core.settings import effective, parse_bytes
from ..core.sources import Sources
from ..find.deps import closure, digest, fingerprint, third_party
from ..spec.loading import PYPROJECT
from ..spec.plan import Plan, Planned, no_spec_findings
from ..spec.values import spec_refs
from .lowered import lowering_job, targets_of, with_lowerings
from .pool import Cancelled, Pool
from .proofs import prove, settled
from .protocol import CODEC, Job, OwnerPlan


def job_for(
    plan: Plan,
    planned: Planned,
    options: Options,
    *,
    environment: str = "",
    sources: Mapping[str, str] | None = None,
) -> Job:
    """The worker job for one planned module. ``sources`` maps project-relative paths to
    unsaved text that the worker reads instead of the disk (and the cache key hashes);
    ``environment`` is the pool's (``verdicts.environment``), the rest of the key."""
    spec = planned.spec
    assert spec is not None
    settings = effective(spec.settings, options.overrides)
    files = Sources.of(plan.root, sources)
    # a saved artifact is a side effect: never answered from the cache
    called = spec_refs(spec.init, spec.factory)  # a factory in another project file is part of the module too
    own = [fingerprint(files, files.path(r.where)) for r in called if r.in_project]
    file = files.path(planned.module.path)
    paths = closure(files, file)  # walked once: the key hashes it, the preload reads its imports
    key = (
        ""
        if options.artifact
        else fingerprint(files, file, repr(spec), CODEC.dumps(options), environment, *own, paths=paths)
    )
    name = planned.module.name_span
    return Job(
        root=str(plan.root),
        target=planned.target,
        class_line=name.line,
        class_column=name.column,
        class_end_column=name.end_column if name.end_line == name.line else None,
        options=options,
        timeout=settings.timeout,
        memory_limit=parse_bytes(settings.memory_limit),
        sandbox=settings.sandbox,
        device=settings.device,
        preload=tuple(sorted({*third_party(files, file, paths), *(str(r) for r in called if not r.in_project)})),
        key=key,
        sources=files.relative(),
        plan=owner_plan(plan, planned),
    )


def owner_plan(plan: Plan, planned: Planned) -> OwnerPlan:
    """This module's part of the owner's static plan, for the worker to use instead of
    parsing the project again (libcst: 10 ms for a small file, 2 s for transformers'
    modeling_llama.py, whose bases are found in other files). With it go digests of the
    texts it was made from (``plan.sources`` where given, else the disk's); a worker
    that imports other text (an unsaved buffer, a file saved meanwhile) plans again."""
    one = Plan(plan.root, plan.project, [planned], [])
    return OwnerPlan(one, {path: digest(plan.sources, path) for path in (planned.module.path, PYPROJECT)})


def skipped(planned: Planned) -> ModuleReport:
    findings = no_spec_findings(planned)
    return ModuleReport(planned.target, Status.SKIPPED, tuple(findings))


def check_in_workers(
    plan: Plan,
    pool: Pool,
    options: Options = Options(),
    *,
    artifacts: Path | None = None,
    prove_fixes: bool = True,
) -> Report:
    """Each planned module's report; with ``prove_fixes``, each preferred fix exported with
    it applied first, and titled with what that gave (proofs.py)."""
    futures: list[ModuleReport | tuple[Job, Future]] = []
    sources = plan.sources.relative()
    for planned in plan.modules:
        if planned.spec is None:
            futures.append(skipped(planned))
            continue
        opts = replace(options, artifact=artifacts / f"{planned.module.name}.pt2") if artifacts else options
        job = job_for(plan, planned, opts, environment=pool.environment, sources=sources)
        futures.append((job, pool.submit(job)))
    modules = []
    for planned, f in zip(plan.modules, futures):
        report = f if isinstance(f, ModuleReport) else _result(f[1], planned)
        if not isinstance(f, ModuleReport) and prove_fixes:
            proven_report = prove(f[0], report, plan.sources, lambda job: pool.submit(job, supersede=False))
            if proven_report is not report:
                pool.remember(f[0], proven_report)  # a later run shows the proven titles too
            report = proven_report
        if not isinstance(f, ModuleReport):
            report = settled(report)  # what the job said: a fix the owner did not prove is not preferred
        if planned.findings and report.status is not Status.SKIPPED:
            report = replace(report, findings=planned.findings + report.findings)
        modules.append(report)
    return Report(tuple(_lowered(plan, pool, futures, modules)), tuple(plan.findings))


def _lowered(plan: Plan, pool: Pool, futures: list, modules: list[ModuleReport]) -> list[ModuleReport]:
    """Each exported module whose spec names targets, lowered in a second job (lowered.py)."""
    lowering: list[tuple[int, tuple[str, ...], Future]] = []
    for i, (planned, f, report) in enumerate(zip(plan.modules, futures, modules)):
        targets = targets_of(planned, f[0]) if not isinstance(f, ModuleReport) else ()
        if targets and report.status is Status.EXPORTED:
            lowering.append((i, targets, pool.submit(lowering_job(f[0], targets), supersede=False, background=True)))
    for i, targets, future in lowering:
        lowered = _result(future, plan.modules[i])
        if lowered.status is not Status.SKIPPED:
            modules[i] = with_lowerings(modules[i], lowered, targets)
    return modules


def _result(future: Future, planned: Planned) -> ModuleReport:
    try:
        return future.result()
    except Cancelled:
        return ModuleReport(planned.target, Status.SKIPPED)
