"""A fix's proof runs with the owner's plan of its texts: the worker takes it (its digests
are those of the texts the proof imports) instead of planning the project again, it is the
plan the worker would have made, and the proof exports as the fix promises. Real exports
in a real pool, over a copy of the examples: a fix to pyproject.toml (a range) and one
to the module's code (a hard-coded size)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import Status
from exportlens.exporter.core.sources import Sources
from exportlens.exporter.find.deps import digest
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.spec.plan_cache import PlanCache
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.pool import Pool
from exportlens.exporter.workers.proofs import proofs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proof-plans") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    return root


@pytest.mark.parametrize(
    "target, edited",
    [("models/positional.py:LearnedPositions", "pyproject.toml"), ("models/head.py:ClassifierHead", "models/head.py")],
)
@pytest.mark.slow
def test_a_proof_runs_with_the_owner_s_plan_of_its_texts(root: Path, target: str, edited: str):
    plan = make_plan([root])
    planned = next(p for p in plan.modules if p.target == target)
    job = job_for(plan, planned, Options())
    with Pool(jobs=1) as pool:
        report = pool.run(job)
        assert report.status is Status.FAILED, report.findings
        plans = PlanCache()
        tried = proofs(job, report, plan.sources, plans)
        built = plans.built
        assert [p.job for p in proofs(job, report, plan.sources, plans)] == [p.job for p in tried]
        assert plans.built == built  # the same texts: planned once
        proof = next(p for p in tried if edited in p.job.sources)
        sent = proof.job.plan
        assert sent is not None
        files = Sources.of(root, proof.job.sources)
        # what the worker checks before it takes the plan: the texts it imports are those planned
        assert all(digest(files, path) == hashed for path, hashed in sent.digests.items())
        own = make_plan([files.path(planned.module.path)], root=root, sources=files)
        assert sent.plan.modules == [p for p in own.modules if p.target == target]
        assert sent.digests[edited] != job.plan.digests[edited]  # planned from the texts the fix made
        assert pool.run(proof.job).status is Status.EXPORTED
