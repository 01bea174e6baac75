"""Check a plan's modules in isolated workers, in parallel (no torch: the owner's side)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from ..core.options import Options, Task
from ..core.report import ModuleReport, Report, Status
from ..core.settings import effective, parse_bytes
from ..core.sources import Sources
from ..core.targets import Span
from ..find.deps import closure, fingerprint, imported_files, third_party
from ..spec.plan import Plan, Planned, no_spec_findings
from ..spec.plan_cache import PlanCache
from ..spec.values import spec_refs
from .lowering import lowering_job, targets_of, with_lowerings
from .pool import Cancelled, Pool
from .proof_plans import owner_plan
from .proofs import prove, settled
from .protocol import CODEC, Job


def job_for(
    plan: Plan,
    planned: Planned,
    options: Options,
    *,
    task: Task = Task.SERVE,
    environment: str = "",
    sources: Mapping[str, str] | None = None,
    imports: Callable[[Sources, Path], Set[Path]] = imported_files,
) -> Job:
    """The worker job that does ``task`` with one planned module. ``sources`` maps project-relative
    paths to unsaved text that the worker reads instead of the disk (and the cache key hashes);
    ``environment`` is the pool's (``verdicts.environment``), the rest of the key; ``imports``, a
    file's direct imports (the server's ``ImportGraph`` keeps them between saves)."""
    spec = planned.spec
    assert spec is not None
    settings = effective(spec.settings, options.overrides)
    files = Sources.of(plan.root, sources)
    called = spec_refs(spec.init, spec.factory)  # a factory in another project file is part of the module too
    file = files.path(planned.module.path)
    paths = closure(files, file, imports)  # walked once: the key hashes it, the preload reads its imports
    name = planned.module.name_span
    return Job(
        root=str(plan.root),
        target=planned.target,
        name_span=name if name.end_line == name.line else Span(name.line, name.column),
        options=options,
        timeout=settings.timeout,
        memory_limit=parse_bytes(settings.memory_limit),
        sandbox=settings.sandbox,
        device=settings.device,
        preload=tuple(sorted({*third_party(files, file, paths), *(str(r) for r in called if not r.in_project)})),
        key=_cache_key(files, file, paths, spec, task, options, environment, called),
        sources=files.relative(),
        plan=owner_plan(plan, planned),
        task=task,
    )


def _cache_key(files: Sources, file: Path, paths, spec, task: Task, options: Options, environment: str, called) -> str:
    """The verdict cache's key: the module's file and its import closure as the user sees them,
    its spec, the job's task and options and the environment, and the project files its factory
    calls. A saved artifact is a side effect: never answered from the cache ("")."""
    if options.artifact:
        return ""
    own = [fingerprint(files, files.path(r.where)) for r in called if r.in_project]
    what = (CODEC.dumps(spec), task.value, CODEC.dumps(options), environment)
    return fingerprint(files, file, *what, *own, paths=paths)


def skipped(planned: Planned) -> ModuleReport:
    findings = no_spec_findings(planned)
    return ModuleReport(planned.target, Status.SKIPPED, tuple(findings))


def export_in_workers(
    plan: Plan,
    pool: Pool,
    options: Options = Options(),
    *,
    task: Task = Task.SERVE,
    artifacts: Path | None = None,
    prove_fixes: bool = True,
    lower: bool = True,
) -> Report:
    """Each planned module's report, from a job that does ``task``; with ``prove_fixes``, each
    preferred fix exported with it applied first, and titled with what that gave (proofs.py);
    with ``lower``, each exported module lowered for its spec's targets."""
    futures: list[ModuleReport | tuple[Job, Future]] = []
    sources = plan.sources.relative()
    plans = PlanCache()  # the proofs' plans: fixes that meet reach the same texts
    for planned in plan.modules:
        if planned.spec is None:
            futures.append(skipped(planned))
            continue
        opts = replace(options, artifact=artifacts / f"{planned.module.name}.pt2") if artifacts else options
        job = job_for(plan, planned, opts, task=task, environment=pool.environment, sources=sources)
        futures.append((job, pool.submit(job)))
    modules = []
    for planned, f in zip(plan.modules, futures):
        report = f if isinstance(f, ModuleReport) else _result(f[1], planned)
        if not isinstance(f, ModuleReport) and prove_fixes:
            submit = lambda job: pool.submit(job, supersede=False)  # noqa: E731
            proven_report = prove(f[0], report, plan.sources, submit, plans)
            if proven_report is not report:
                pool.remember(f[0], proven_report)  # a later run shows the proven titles too
            report = proven_report
        if not isinstance(f, ModuleReport):
            report = settled(report)  # what the job said: a fix the owner did not prove is not preferred
        if planned.findings and report.status is not Status.SKIPPED:
            report = replace(report, findings=planned.findings + report.findings)
        modules.append(report)
    return Report(tuple(_lowered(plan, pool, futures, modules) if lower else modules), tuple(plan.findings))


def _lowered(plan: Plan, pool: Pool, futures: list, modules: list[ModuleReport]) -> list[ModuleReport]:
    """Each exported module whose spec names targets, lowered in a second job (lowering.py)."""
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
