"""Fixes proven by exporting with them applied (owner side, no torch).

A preferred fix is a promise. After a module's report is in, each finding's
preferred fix is applied to the texts the export read, as an editor would, and
the module is exported again in a worker of its own, from those texts (an unsaved
buffer, for the worker). What that gave is written on the fix: ``verified`` is
``"exports"`` or ``"partial"`` (fewer problems, and not this one), and its title
says so; a fix that leaves its own problem (or a spec that no longer plans) is not
offered. Fixes not tried stay ``"unverified"``; once the proofs are done (``settled``)
none of them is preferred: a job's report is untrusted (validate.py resets its
``verified``), and its ``preferred`` only names the fix for the owner to try.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace

from ..core.report import Finding, Fix, ModuleReport, Status
from ..core.sources import Sources
from ..static.edits import apply_edits
from .probed import ranked, with_probes
from .protocol import Job

EXPORTS, PARTIAL, UNVERIFIED = "exports", "partial", "unverified"


@dataclass(frozen=True)
class Proof:
    """One fix under test: which finding's, and the job that exports with it applied."""

    finding: int  # index in the report's findings
    fix: int  # index in that finding's fixes
    job: Job


def proofs(job: Job, report: ModuleReport, sources: Sources) -> list[Proof]:
    """A job for the preferred fix of each finding of a failed report, and for each remedy of
    a data-dependent branch (the same fix on several findings is tried once, for the first)."""
    if report.status is not Status.FAILED or report.cached:
        return []
    out, seen = [], set()
    for i, finding in enumerate(report.findings):
        for j, fix in enumerate(finding.fixes):
            # a remedy of a data-dependent branch is tried whether preferred or not: its probes choose (probed.py)
            proven_already = fix.verified != UNVERIFIED  # (a remembered report)
            if not (fix.preferred or fix.probes) or proven_already or fix.edits in seen:
                continue
            seen.add(fix.edits)
            texts = _applied(fix, sources)
            if texts is not None:
                # the worker plans again from these texts (their digests differ from the plan's)
                # and saves nothing: a proof is not the export the user asked for; it runs the program
                # too, and a remedy's, on its probes beside the module as written (the files it edits)
                written = {path: sources.text(path) for path in texts if path.endswith(".py")} if fix.probes else {}
                options = replace(job.options, artifact=None, serve=True, probes=fix.probes, eager_sources=written)
                out.append(Proof(i, j, replace(job, key="", plan=None, options=options, sources={**job.sources, **texts})))
    return out


def _applied(fix: Fix, sources: Sources) -> dict[str, str] | None:
    """The texts of the files the fix edits, with its edits made; None where one is unreadable."""
    texts = {}
    for path in dict.fromkeys(e.path for e in fix.edits):
        text = sources.text(path) if sources.exists(path) else None
        if text is None:
            return None
        texts[path] = apply_edits(text, [e for e in fix.edits if e.path == path])
    return texts


def proven(report: ModuleReport, results: list[tuple[Proof, ModuleReport | None]]) -> ModuleReport:
    """``report`` with what each tried fix gave written on it (None: the try did not finish)."""
    findings = list(report.findings)
    for proof, after in results:
        if after is None:
            continue
        tried = report.findings[proof.finding].fixes[proof.fix]
        judged = with_probes(_judged(tried, report.findings[proof.finding], after), after)
        # wherever the same fix is offered (a fix for all is on each finding it solves)
        findings = [replace(f, fixes=tuple(judged if x == tried else x for x in f.fixes if x != tried or judged)) for f in findings]
    return replace(report, findings=tuple(ranked(f) for f in findings))


def settled(report: ModuleReport) -> ModuleReport:
    """``report`` as it is shown once its proofs are done: no fix preferred that the owner
    did not prove (one not tried, or whose try did not finish). What is remembered is the
    report before this, so that a later run tries such a fix again."""

    def fix(f: Fix) -> Fix:
        return replace(f, preferred=False) if f.preferred and f.verified == UNVERIFIED else f

    findings = tuple(replace(f, fixes=tuple(map(fix, f.fixes))) for f in report.findings)
    return replace(report, findings=findings) if findings != report.findings else report


def _judged(fix: Fix, finding: Finding, after: ModuleReport) -> Fix | None:
    """The fix, titled with what exporting with it gave; None for one that does not solve
    its own problem (or leaves the module unexportable another way): not offered."""
    if after.status is Status.EXPORTED:
        return replace(fix, title=f"{fix.title} (module then exports)", verified=EXPORTS)
    still = any((f.code, f.path, f.message) == (finding.code, finding.path, finding.message) for f in after.findings)
    if still or after.status is not Status.FAILED:
        return None
    left = len(after.errors) or len(after.findings)
    return replace(
        fix, title=f"{fix.title} ({left} more problem{'s' if left != 1 else ''} remain{'s' if left == 1 else ''})", verified=PARTIAL
    )


def prove(job: Job, report: ModuleReport, sources: Sources, submit: Callable[[Job], Future]) -> ModuleReport:
    """Export with each preferred fix applied, and say on each what it gave (blocking)."""
    tries = proofs(job, report, sources)
    if not tries:
        return report
    futures = [(p, submit(p.job)) for p in tries]
    results = []
    for proof, future in futures:
        try:
            results.append((proof, future.result()))
        except Exception:
            results.append((proof, None))
    return proven(report, results)
