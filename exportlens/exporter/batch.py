"""Check a plan's modules in isolated workers, in parallel (no torch: the owner's side)."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from .deps import fingerprint
from .options import Options
from .plan import Plan, Planned, no_spec_finding
from .pool import Cancelled, Job, Pool
from .report import ModuleReport, Report, Status
from .spec import parse_bytes


def job_for(plan: Plan, planned: Planned, options: Options, *, timeout: float | None = None, memory_limit: str | None = None, python: str = "") -> Job:
    spec = planned.spec
    assert spec is not None
    settings = spec.settings
    limit = parse_bytes(memory_limit or settings.memory_limit)
    opts = options.to_json()
    # a saved artifact is a side effect: never answered from the cache
    key = "" if options.artifact else fingerprint(plan.root, plan.root / planned.module.path, repr(spec), repr(sorted(opts.items())), python)
    return Job(
        root=str(plan.root),
        target=planned.target,
        class_line=planned.module.name_span.line,
        options=opts,
        timeout=timeout or settings.timeout,
        memory_limit=limit,
        key=key,
    )


def skipped(planned: Planned) -> ModuleReport:
    findings = planned.findings or (no_spec_finding(planned.module),)
    return ModuleReport(planned.target, Status.SKIPPED, tuple(findings))


def check_in_workers(plan: Plan, pool: Pool, options: Options = Options(), *, artifacts: Path | None = None, timeout: float | None = None, memory_limit: str | None = None) -> Report:
    futures: list[ModuleReport | Future] = []
    for planned in plan.modules:
        if planned.spec is None:
            futures.append(skipped(planned))
            continue
        opts = replace(options, artifact=artifacts / f"{planned.module.name}.pt2") if artifacts else options
        futures.append(pool.submit(job_for(plan, planned, opts, timeout=timeout, memory_limit=memory_limit, python=pool.python)))
    modules = []
    for planned, f in zip(plan.modules, futures):
        report = f if isinstance(f, ModuleReport) else _result(f, planned)
        if planned.findings and report.status is not Status.SKIPPED:
            report = replace(report, findings=planned.findings + report.findings)
        modules.append(report)
    return Report(tuple(modules), tuple(plan.findings))


def _result(future: Future, planned: Planned) -> ModuleReport:
    try:
        return future.result()
    except Cancelled:
        return ModuleReport(planned.target, Status.SKIPPED)
