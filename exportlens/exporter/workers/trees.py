"""``exportlens tree`` in an isolated worker (owner side, no torch): one job exports every
submodule of a module (runtime/subtree.py), under the limits a ``check`` job runs under."""

from __future__ import annotations

from dataclasses import replace

from ..core.options import Options
from ..core.tree import SubmoduleTree
from ..spec.plan import Plan, Planned, no_spec_findings
from .batch import job_for
from .pool import Pool
from .protocol import Task

# a tree exports each distinct submodule where a check exports one module: its job may run
# this many times the module's timeout
TREE_TIMES = 10


def tree_in_worker(plan: Plan, planned: Planned, pool: Pool, options: Options = Options()) -> SubmoduleTree:
    """``planned``'s tree; where its process hung, crashed or exited, no nodes and the
    finding ``check`` would give."""
    if planned.spec is None:
        return SubmoduleTree(planned.target, findings=no_spec_findings(planned))
    job = job_for(plan, planned, options, sources=plan.sources.relative())
    job = replace(job, task=Task.TREE, key="", timeout=job.timeout * TREE_TIMES)  # key "": never cached
    got = pool.submit(job).result()
    if isinstance(got, SubmoduleTree):
        return got
    return SubmoduleTree(planned.target, findings=planned.findings + got.findings, seconds=got.seconds)
