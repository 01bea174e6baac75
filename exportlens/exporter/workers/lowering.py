"""Lowering, as a second job after the export's own verdict (owner side, no torch).

A module whose spec names deployment targets is exported first as always; once that
verdict is in, and only where it exported, the same module goes to a worker again with
``Task.LOWER``: exported again there, then lowered for each target and its artifact
run against eager (runtime/lowering/). What that job says of the targets (its
``lowerings`` and its EL6xx findings) is added to the first verdict; anything else it
says is the export's again and is not repeated. A lowering job that ends without a
report (past its time, out of memory) says so on the module's report."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from ..core.lowering import FAILED, Lowering
from ..core.report import Finding, Kind, ModuleReport, Status
from ..core.settings import effective
from ..spec.plan import Planned
from .protocol import Job, Task

LOWER_SECONDS = 600.0  # each target's compile may take this long beside the export's own timeout


def targets_of(planned: Planned, job: Job) -> tuple[str, ...]:
    return effective(planned.spec.settings, job.options.overrides).targets if planned.spec else ()


def lowering_job(job: Job, targets: tuple[str, ...]) -> Job:
    """``job`` again, to be lowered for ``targets`` (the spec's, or some of them: the editor lowers
    one at a time): no artifact of the export's, no second run at the bounds."""
    overrides = replace(job.options.overrides, targets=targets)
    options = replace(job.options, artifact=None, collect_all=False, overrides=overrides)
    timeout = job.timeout + LOWER_SECONDS * len(targets)
    return replace(job, task=Task.LOWER, options=options, timeout=timeout, key=_key(job.key, targets))


def _key(key: str, targets: tuple[str, ...]) -> str:
    """Its own verdict on disk, beside the export's (a key is a sha256, as verdicts.py names its files)."""
    return hashlib.sha256(f"{key}:lower:{','.join(targets)}".encode()).hexdigest() if key else ""


def with_lowerings(report: ModuleReport, lowered: ModuleReport, targets: tuple[str, ...]) -> ModuleReport:
    """``report`` with what the lowering job said of the targets."""
    if lowered.status is Status.EXPORTED:
        found = tuple(f for f in lowered.findings if f.kind is Kind.LOWERING)  # EL6xx, each made as one
        return replace(report, findings=report.findings + found, lowerings=lowered.lowerings)
    # it did not get as far as lowering (a timeout, a crash): each target failed, and why
    known = {(f.code, f.message) for f in report.findings}
    found = tuple(f for f in lowered.findings if (f.code, f.message) not in known)
    return replace(
        report, findings=report.findings + _lowering_said(found), lowerings=tuple(Lowering(t, FAILED) for t in targets)
    )


def _lowering_said(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
    return tuple(replace(f, message=f"while lowering: {f.message}") for f in found)
