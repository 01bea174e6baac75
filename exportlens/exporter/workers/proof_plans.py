"""A proof's plan, made by the owner (no torch): a proof exports its module from other
texts (a fix applied), so the plan its job was sent with may be stale; the owner plans
those texts, once per text (``PlanCache``), and the worker takes that plan as it takes a
job's, by its digests, instead of parsing the project again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.sources import Sources
from ..find.deps import digest
from ..spec.loading import PYPROJECT
from ..spec.plan import Plan, Planned
from ..spec.plan_cache import PlanCache
from .protocol import Job, OwnerPlan


def with_owner_plan(job: Job, plans: PlanCache) -> Job:
    """``job`` with the owner's plan of its own texts: the one it has where the fix left the
    module's file and pyproject.toml as they were; re-resolved against the new pyproject.toml
    where only that changed; else its file planned again (its positions may have moved).
    Without a plan to start from (a TOML value JSON cannot carry), the worker plans."""
    if job.plan is None or len(job.plan.plan.modules) != 1:
        return job
    files = Sources.of(Path(job.root), job.sources)
    changed = {path for path, hashed in job.plan.digests.items() if digest(files, path) != hashed}
    if not changed:
        return job
    planned = job.plan.plan.modules[0]
    if planned.module.path in changed:
        plan = plans.file_plan(files.path(planned.module.path), files, job.target)
    else:
        project = plans.project(files)
        plan = Plan(files.root, project, plans.planned(planned.module, project), [], sources=files)
    one = next((p for p in plan.modules if p.target == job.target), None)
    if one is None or one.spec is None:
        return replace(job, plan=None)  # no longer plans: the worker says why, as it would for a job
    return replace(job, plan=owner_plan(plan, one))


def owner_plan(plan: Plan, planned: Planned) -> OwnerPlan:
    """This module's part of the owner's static plan, for the worker to use instead of
    parsing the project again (with libcst, slow for a large file whose bases are found in
    other files). With it go digests of the texts it was made from (``plan.sources`` where
    given, else the disk's); a worker that imports other text (an unsaved buffer, a file
    saved meanwhile) plans again. The project goes without its text and tables: the worker
    reads the planned module's spec alone, and the others of a pyproject.toml with hundreds of
    tables would be most of each job's line, encoded by the owner and decoded by the job."""
    project = replace(plan.project, tables={}, findings=[], text="")
    one = Plan(plan.root, project, [planned], [], sources=Sources(plan.root))
    return OwnerPlan(one, {path: digest(plan.sources, path) for path in (planned.module.path, PYPROJECT)})
