"""Fixes proven by exporting with them applied (owner side, no torch).

A preferred fix is a promise. After a module's report is in, each finding's
preferred fix (and a fix offered on several findings: "apply all") is applied to
the texts the export read, as an editor would, and the module is exported again in
a worker of its own, from those texts (an unsaved buffer, for the worker), and its
program run at the spec's bounds. Where that fails only on problems with preferred
fixes of their own, those are folded in and it is exported again (converge.py).
What the last export gave is written on the fix: ``verified`` is ``SERVES``
(exports, and the program serves the declared ranges), ``EXPORTS`` (on ``meta``,
where nothing runs) or ``PARTIAL`` (fewer problems, and not this one), and its
title's suffix is derived from that field alone (``Fix.title``); a fix that leaves its
own problem (or a spec that no longer plans) is not offered, nor one whose proof failed
inside exportlens (counted in the report's ``fixes_dropped``). Fixes not tried stay
``UNVERIFIED``, as do those whose proof's export was stopped (a timeout, a crash: of the
machine, not the fix; converge.py), and the next run tries them again. Once the proofs are
done (``settled``) none of them is preferred: a job's report is untrusted (validate.py
resets its ``verified``), and its ``preferred`` only names the fix for the owner to try.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace

from ..core.report import Finding, Fix, Kind, ModuleReport, Status, Verified
from ..core.sources import Sources
from ..edit.text_edits import apply_edits
from ..spec.plan_cache import PlanCache
from .converge import Converging, Once
from .fix_preference import ranked, with_probes
from .lowering import LOWER_SECONDS, targets_of
from .proof_plans import with_owner_plan
from .protocol import Job, Task

log = logging.getLogger(__name__)
SERVES, EXPORTS, PARTIAL, UNVERIFIED = Verified.SERVES, Verified.EXPORTS, Verified.PARTIAL, Verified.UNVERIFIED


@dataclass(frozen=True)
class Proof:
    """One fix under test: which finding's, and the job that exports with it applied."""

    finding: int  # index in the report's findings
    fix: int  # index in that finding's fixes
    job: Job


def proofs(job: Job, report: ModuleReport, sources: Sources, plans: PlanCache | None = None) -> list[Proof]:
    """A job for the preferred fix of each finding of a failed report (or an exported one's
    warning about the program, EL207), for a fix offered on
    several, and for each remedy of a data-dependent branch (the same fix is tried once, for
    the first finding). Each job carries the owner's plan of its texts (proof_plans.py)."""
    plans = plans or PlanCache()
    if report.cached or not (
        report.status is Status.FAILED or any(f.kind is Kind.SPECIALIZATION for f in report.findings)
    ):
        return []  # (an exported module's finding of its own: an int it bakes in, EL207)
    shared = {fix.edits for f in report.findings for fix in f.fixes if sum(fix in g.fixes for g in report.findings) > 1}
    out, seen = [], set()
    for i, finding in enumerate(report.findings):
        backup = _backup(finding)
        for j, fix in enumerate(finding.fixes):
            tried = fix.verified != UNVERIFIED  # (a remembered report is proven already)
            # a remedy of a data-dependent branch is tried whether preferred or not: its probes choose (fix_preference)
            if not (fix.preferred or fix.probes or fix.edits in shared or j == backup) or tried or fix.edits in seen:
                continue
            seen.add(fix.edits)
            texts = _applied(fix, sources)
            if texts is not None:
                # the worker takes the owner's plan of these texts, and saves nothing: a proof
                # is not the export the user asked for; it runs the program
                # too, and a remedy's, on its probes beside the module as written (the files it edits)
                written = {path: sources.text(path) for path in texts if path.endswith(".py")} if fix.probes else {}
                options = replace(job.options, artifact=None, probes=fix.probes, eager_sources=written)
                proof = replace(job, task=Task.PROVE, key="", options=options, sources={**job.sources, **texts})
                proof = _lowering(proof)
                out.append(Proof(i, j, with_owner_plan(proof, plans)))
    return out


def _lowering(proof: Job) -> Job:
    """``proof`` lowering what it exports for the spec's targets, where it declares some: a fix
    that exports but does not lower breaks the deployment (an assertion op a target refuses)."""
    planned = proof.plan.plan.modules[0] if proof.plan is not None and proof.plan.plan.modules else None
    targets = targets_of(planned, proof) if planned is not None else ()
    if not targets:
        return proof
    options = replace(proof.options, overrides=replace(proof.options.overrides, targets=targets))
    return replace(proof, options=options, timeout=proof.timeout + LOWER_SECONDS * len(targets))


def _backup(finding: Finding) -> int | None:
    """Where the preferred fix is judged on probes (a rewrite that may change what the model
    computes: ``view(4, -1)`` runs at batch 16 too), the first fix after it that is not: proven
    as well, it is the one preferred where the probes refuse the rewrite (probed.ranked)."""
    if finding.kind not in (Kind.SPECIALIZATION, Kind.CONSTRAINT_VIOLATION):
        return None  # a data-dependent branch's fixes are each tried on their probes already
    first = next((j for j, f in enumerate(finding.fixes) if f.preferred), None)
    if first is None or not finding.fixes[first].probes:
        return None
    return next((j for j in range(first + 1, len(finding.fixes)) if not finding.fixes[j].probes), None)


def _applied(fix: Fix, sources: Sources) -> dict[str, str] | None:
    """The texts of the files the fix edits, with its edits made; None where one is unreadable."""
    texts = {}
    for path in dict.fromkeys(e.path for e in fix.edits):
        text = sources.text(path) if sources.exists(path) else None
        if text is None:
            return None
        texts[path] = apply_edits(text, [e for e in fix.edits if e.path == path])
    return texts


def converging(report: ModuleReport, proof: Proof, sources: Sources, plans: PlanCache | None = None) -> Converging:
    """The rounds of ``proof``'s fix (converge.py): folded on only where it solved its own problem."""
    finding = report.findings[proof.finding]
    return Converging(proof.job, sources, lambda first: not _still(finding, first), plans)


def proven(report: ModuleReport, results: list[tuple[Proof, Converging]]) -> ModuleReport:
    """``report`` with how far each tried fix got written on it (one whose first try never
    finished, or was stopped by a timeout or a crash: as it was, to be tried again; one
    whose try failed inside exportlens: dropped and counted)."""
    findings, dropped = list(report.findings), report.fixes_dropped
    for proof, rounds in results:
        if rounds.first is None or rounds.after is None:
            continue
        tried = report.findings[proof.finding].fixes[proof.fix]
        if any(
            f.kind is Kind.INTERNAL for f in rounds.first.findings
        ):  # exportlens failed at the proof: not the fix's doing
            judged, dropped = None, dropped + 1
        else:
            probed = rounds.after if rounds.after.probes else rounds.first
            judged = with_probes(_judged(tried, report.findings[proof.finding], rounds), probed)
        # wherever the same fix is offered (a fix for all is on each finding it solves)
        findings = [
            replace(f, fixes=tuple(y for x in f.fixes if (y := judged if x == tried else x) is not None))
            for f in findings
        ]
    return replace(report, findings=tuple(ranked(_distinct(f)) for f in findings), fixes_dropped=dropped)


def _distinct(finding: Finding) -> Finding:
    """Two fixes that converged to the same edits are one: the first offered stays."""
    seen, fixes = set(), []
    for fix in finding.fixes:
        if fix.verified != UNVERIFIED and fix.edits in seen:
            continue
        seen.add(fix.edits)
        fixes.append(fix)
    return replace(finding, fixes=tuple(fixes)) if len(fixes) != len(finding.fixes) else finding


def settled(report: ModuleReport) -> ModuleReport:
    """``report`` as it is shown once its proofs are done: no fix preferred that the owner
    did not prove (one not tried, or whose try did not finish). What is remembered is the
    report before this, so that a later run tries such a fix again."""

    def fix(f: Fix) -> Fix:
        return replace(f, preferred=False) if f.preferred and f.verified == UNVERIFIED else f

    findings = tuple(replace(f, fixes=tuple(map(fix, f.fixes))) for f in report.findings)
    return replace(report, findings=findings) if findings != report.findings else report


def _judged(fix: Fix, finding: Finding, rounds: Converging) -> Fix | None:
    """The fix with every edit folded into it, and what its last export gave; None for one
    that does not solve its own problem (or leaves the module unexportable another way)."""
    first, after = rounds.first, rounds.after
    if first is None or after is None or _still(finding, first) or first.status not in (Status.FAILED, Status.EXPORTED):
        return None
    action = "; then ".join((fix.action, *(f.action[:1].lower() + f.action[1:] for f in rounds.folded)))
    if after.status is Status.EXPORTED:
        verified, left = (EXPORTS if rounds.job.device == "meta" else SERVES), 0
    else:
        verified, left = PARTIAL, len(after.errors) or len(after.findings)
    lowered = after.lowerings if after.status is Status.EXPORTED else ()
    edits, rank = rounds.edits(fix), rounds.rank(fix)
    return replace(fix, action=action, edits=edits, verified=verified, remaining=left, rank=rank, lowerings=lowered)


def _still(finding: Finding, after: ModuleReport) -> bool:
    """Whether ``finding``'s problem is still in ``after``."""
    return any((f.code, f.path, f.message) == (finding.code, finding.path, finding.message) for f in after.findings)


def prove(
    job: Job, report: ModuleReport, sources: Sources, submit: Callable[[Job], Future], plans: PlanCache | None = None
) -> ModuleReport:
    """Export with each preferred fix applied, round after round (converge.py), and say on
    each what it reached (blocking; the fixes' rounds run side by side)."""
    plans = plans or PlanCache()
    tries = [(p, converging(report, p, sources, plans)) for p in proofs(job, report, sources, plans)]
    if not tries:
        return report
    submit = Once(submit)
    pending = [(rounds, submit(p.job)) for p, rounds in tries]
    while pending:
        stepped = [(rounds, rounds.step(_result(future))) for rounds, future in pending]
        pending = [(rounds, submit(nxt)) for rounds, nxt in stepped if nxt is not None]
    return proven(report, tries)


def _result(future: Future) -> ModuleReport | None:
    try:
        return future.result()
    except Exception as e:  # cancelled, or the pool closed under it: the fix stays unproven, and not preferred
        log.warning("a fix's proof did not finish: %s: %s", type(e).__name__, e)
        return None
