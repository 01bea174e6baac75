"""Check every planned module in this process (torch side); the worker pool wraps this."""

from __future__ import annotations

from pathlib import Path

from ..core.report import ModuleReport, Report, Status
from ..static.plan import Plan, Planned, no_spec_finding
from .run import Options, export_module


def check_one(plan: Plan, planned: Planned, options: Options = Options()) -> ModuleReport:
    if planned.spec is None:
        findings = planned.findings or (no_spec_finding(planned.module),)
        return ModuleReport(planned.target, Status.SKIPPED, tuple(findings))
    report = export_module(plan.root, planned.module, planned.spec, options, sources=plan.sources)
    if planned.findings:  # warnings about the spec ride along with the verdict
        report = ModuleReport(
            report.target,
            report.status,
            planned.findings + report.findings,
            report.summary,
            report.spec_source,
            report.seconds,
            report.torch_version,
        )
    return report


def check_plan(plan: Plan, options: Options = Options(), artifacts: Path | None = None) -> Report:
    modules = []
    for planned in plan.modules:
        opts = options
        if artifacts is not None and planned.spec is not None:
            opts = Options(artifacts / f"{planned.module.name}.pt2", options.collect_all, options.ir, options.device, options.strict)
        modules.append(check_one(plan, planned, opts))
    return Report(tuple(modules), tuple(plan.findings))
