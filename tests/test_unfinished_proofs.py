"""A fix whose proof never finished (its export timed out, crashed or ran out of memory: the
machine was busy, the worker went away) says nothing about the fix: it stays offered,
unproven and not preferred, and the next run tries it again. Before, the timeout counted as a
problem the fix left ("(1 more problem remains)"), and the verdict was remembered so."""

from __future__ import annotations

import shutil
from dataclasses import replace

from conftest import only
from test_remedies import EXAMPLES, ROUTER_SPEC

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import Verified
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.proofs import proofs, prove, settled

COND = "Run both sides of `if routed > 0:` with torch.cond"


def test_a_fix_whose_proof_timed_out_stays_offered_unproven_and_is_not_preferred(project, pool):
    shutil.copy(EXAMPLES / "models" / "router.py", project.root / "router.py")
    project.write("pyproject.toml", ROUTER_SPEC)
    plan = make_plan([project.root])
    job = job_for(plan, plan.modules[0], Options(), environment=pool.environment)
    report = pool.submit(job).result()
    assert any(COND in f.title for f in only(report.findings, "EL101").fixes)
    tried = [p.job for p in proofs(job, report, plan.sources)]
    assert tried  # the router's remedies are each tried

    # every proof's export is stopped by its timeout before it could say anything of its fix
    impatient = lambda proof: pool.submit(replace(proof, timeout=0.001), supersede=False)  # noqa: E731
    proven = prove(job, report, plan.sources, impatient)
    shown = only(settled(proven).findings, "EL101")
    cond = next(f for f in shown.fixes if COND in f.title)
    assert cond.title == COND and cond.verified is Verified.UNVERIFIED  # no "(module then ...)"
    assert not any(f.preferred for f in shown.fixes), [f.title for f in shown.fixes]
    assert not any(f.verified is Verified.PARTIAL for f in shown.fixes), [f.title for f in shown.fixes]
    # remembered as it is, the next run tries the fix again: it is still to be proven
    assert [p.job.sources for p in proofs(job, proven, plan.sources)] == [j.sources for j in tried]


def test_a_fix_whose_proof_was_stopped_is_proven_by_the_next_run(project, pool):
    """Every proof's export is stopped by its timeout; the report as it is then remembered is
    proven by the next run, and its fix then says what it reached."""
    shutil.copy(EXAMPLES / "models" / "router.py", project.root / "router.py")
    project.write("pyproject.toml", ROUTER_SPEC)
    plan = make_plan([project.root])
    job = job_for(plan, plan.modules[0], Options(), environment=pool.environment)
    report = pool.submit(job).result()
    impatient = lambda proof: pool.submit(replace(proof, timeout=0.001), supersede=False)  # noqa: E731
    stopped = prove(job, report, plan.sources, impatient)
    patient = lambda proof: pool.submit(proof, supersede=False)  # noqa: E731
    shown = only(settled(prove(job, stopped, plan.sources, patient)).findings, "EL101")
    assert [f.title for f in shown.fixes if f.preferred] == [f"{COND} (module then exports and serves its ranges)"]
