"""``exportlens tree`` in an isolated worker (owner side, no torch): one job exports every
submodule of a module (runtime/subtree.py), under the limits a ``check`` job runs under."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..core.options import Options, Task
from ..core.report import ModuleReport
from ..core.tree import SubmoduleTree
from ..spec.plan import Plan, Planned, no_spec_findings
from .batch import job_for
from .pool import Pool
from .protocol import Job

# a tree exports each distinct submodule where a check exports one module: its job may run
# this many times the module's timeout
TREE_TIMES = 10


def tree_job(
    plan: Plan, planned: Planned, options: Options, *, environment: str = "", sources: Mapping[str, str] | None = None
) -> Job:
    """The job that exports each submodule of ``planned`` (which has a spec); never cached."""
    job = job_for(plan, planned, options, task=Task.TREE, environment=environment, sources=sources)
    return replace(job, key="", timeout=job.timeout * TREE_TIMES)


def tree_from(planned: Planned, got: SubmoduleTree | ModuleReport) -> SubmoduleTree:
    """What a tree job answered; where its process hung, crashed or exited (a report, not a
    tree), no nodes and the finding ``check`` would give."""
    if isinstance(got, SubmoduleTree):
        return got
    return SubmoduleTree(planned.target, findings=planned.findings + got.findings, seconds=got.seconds)


def tree_in_worker(plan: Plan, planned: Planned, pool: Pool, options: Options = Options()) -> SubmoduleTree:
    """``planned``'s tree, or why there is none."""
    if planned.spec is None:
        return SubmoduleTree(planned.target, findings=no_spec_findings(planned))
    job = tree_job(plan, planned, options, sources=plan.sources.relative())
    return tree_from(planned, pool.submit(job).result())
