"""Check planned modules in this process (torch side): a worker runs ``export_planned`` for its
one module; ``export_plan`` runs a whole plan here (the tests do)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.options import Task
from ..core.report import ModuleReport, Report, Status
from ..spec.plan import Plan, Planned, no_spec_findings
from .run import Options, export_module


def export_planned(plan: Plan, planned: Planned, options: Options = Options(), task: Task = Task.SERVE) -> ModuleReport:
    if planned.spec is None:
        findings = no_spec_findings(planned)
        return ModuleReport(planned.target, Status.SKIPPED, tuple(findings))
    report = export_module(plan.root, planned.module, planned.spec, options, sources=plan.sources, task=task)
    if planned.findings:  # warnings about the spec ride along with the verdict
        report = replace(report, findings=planned.findings + report.findings)
    return report


def export_plan(plan: Plan, options: Options = Options(), artifacts: Path | None = None) -> Report:
    """Every module of ``plan``; with ``artifacts``, each exported program saved there as ``<class>.pt2``."""
    modules = []
    for planned in plan.modules:
        opts = options
        if artifacts is not None and planned.spec is not None:
            opts = replace(options, artifact=artifacts / f"{planned.module.name}.pt2")
        modules.append(export_planned(plan, planned, opts))
    return Report(tuple(modules), tuple(plan.findings))
