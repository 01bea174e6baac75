"""What an error a job raised was, carried as data: read from the exception on the torch side
(``runtime/reading/causes.py``) into ``Finding.cause``, and acted on by the owner
(``workers/outcome.py``), which never searches a finding's words."""

from __future__ import annotations

import errno

import pytest
from conftest import Project

from exportlens.exporter.core.causes import Cause
from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import Status
from exportlens.exporter.core.settings import Overrides
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.batch import job_for

POOL_JOBS = 1


def test_what_an_error_was_is_read_from_the_error_itself():
    import torch

    from exportlens.exporter.runtime.reading.causes import cause_of

    try:
        torch.empty(1 << 62, dtype=torch.uint8)  # torch's allocator refuses it: a RuntimeError
    except RuntimeError as e:
        refused = e
    try:
        try:
            raise MemoryError
        except MemoryError as inner:
            raise ValueError("the cache could not grow") from inner  # a library's error, wrapping it
    except ValueError as e:
        wrapped = e
    errors = {
        "torch's allocator": refused,
        "MemoryError": MemoryError(),
        "ENOMEM": OSError(errno.ENOMEM, "Cannot allocate memory"),
        "wrapped": wrapped,
        "PermissionError": PermissionError(errno.EACCES, "Permission denied", "/etc/shadow"),
        "one named": RuntimeError("read secret: PermissionError; scratch: done"),  # caught, and said
        "the user's words": ValueError("Cannot allocate memory for a cache this long: set max_len"),
        "a plain error": RuntimeError("shapes do not match"),
    }
    assert {name: cause_of(e) for name, e in errors.items()} == {
        "torch's allocator": Cause.OUT_OF_MEMORY,
        "MemoryError": Cause.OUT_OF_MEMORY,
        "ENOMEM": Cause.OUT_OF_MEMORY,
        "wrapped": Cause.OUT_OF_MEMORY,
        "PermissionError": Cause.REFUSED,
        "one named": Cause.REFUSED,
        "the user's words": Cause.NONE,
        "a plain error": Cause.NONE,
    }


CACHE = """
import torch
from torch import nn


class Cache(nn.Module):
    def forward(self, x):
        raise ValueError("Cannot allocate memory for the key cache: set max_len (it is 0)")
"""


def _report(pool, project: Project, target: str):
    plan = make_plan([project.root])
    (planned,) = [p for p in plan.modules if p.target == target]
    return pool.run(job_for(plan, planned, Options(overrides=Overrides(sandbox=False))))


@pytest.mark.slow
def test_a_users_own_error_that_speaks_of_memory_stays_the_users(pool, project: Project):
    """Its words are the user's: only an allocation refused is said as the memory limit."""
    project.write("cache.py", CACHE)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens]
        memory_limit = "1GiB"

        [tool.exportlens.modules."cache.py:Cache"]
        inputs = { x = "f32[4]" }
        """,
    )
    report = _report(pool, project, "cache.py:Cache")
    assert report.status is Status.FAILED
    (finding,) = report.findings
    assert finding.code != "EL503" and "memory limit" not in finding.message, finding
    assert finding.message.startswith("forward raised ValueError"), finding.message
    assert finding.cause is Cause.NONE
