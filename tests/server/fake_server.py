"""`exportlens serve` built with a pool and an indexer of the test's own: the pool answers
every job at once with a canned report, running nothing (no torch); the indexer scans
nothing. Run as a script by test_build.py."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

from exportlens.exporter.core import codes
from exportlens.exporter.core.report import Finding, ModuleReport, Status
from exportlens.server.app import build

MESSAGE = "canned by the test's pool"


class CannedPool:
    """The part of ``workers.pool.Pool`` the server uses."""

    def __init__(self, python: str, jobs: int) -> None:
        self.python, self.jobs = python, jobs
        self.warm_pid = None
        self.environment = ""

    def warm(self) -> None:
        pass

    def close(self) -> None:
        pass

    def cancel(self, target: str, root: str | None = None) -> bool:
        return False

    def remember(self, job: Any, report: Any) -> None:
        pass

    def job_pids(self) -> dict[tuple[str, str], int]:
        return {}

    def submit(
        self, job: Any, on_start: Any = None, *, fresh: bool = False, supersede: bool = True, background: bool = False
    ) -> Future:
        finding = Finding(
            codes.INTERNAL.code, codes.INTERNAL.kind, f"{MESSAGE} ({job.target})", job.path, job.name_span.line
        )
        future: Future = Future()
        future.set_result(ModuleReport(job.target, Status.FAILED, (finding,)))
        return future


class NoIndexer:
    """Scans nothing: only the files the editor opens get indexed."""

    def __init__(self, folder: Path, on_file: Any, on_done: Any) -> None:
        on_done(0)

    def stop(self) -> None:
        pass


if __name__ == "__main__":
    build(pool_factory=CannedPool, indexer_factory=NoIndexer).start_io()
