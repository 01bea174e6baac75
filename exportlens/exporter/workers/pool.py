"""Isolated warm workers, seen from the process that owns them (no torch here).

One warm parent (``worker.py``) per pool forks a fresh child for each job. The
owner (the CLI or the LSP server) enforces each job's wall-clock timeout and
cancellation by killing the child's whole process group, turns crashes into
findings, and keeps a cache of results keyed by everything that can change a
verdict: in memory, and with ``persist`` on disk too (``verdicts.py``), so that a
later run answers without starting a worker, or importing torch, at all. Where fork
after importing torch is unsafe (macOS, Windows), the pool keeps pre-started
single-job spares instead.

A job's clock starts when its process starts, not when it is queued: the warm
parent's own start (importing torch, a first export) is bounded separately by
``startup_timeout``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.report import ModuleReport
from .outcome import outcome, too_wide
from .platform import fork_is_safe, kill_tree
from .processes import Spares, Warm
from .protocol import Done, Job, Lost, Run, Started
from .validate import kept
from .verdicts import Verdicts, environment

log = logging.getLogger(__name__)

STARTUP_TIMEOUT = 120.0  # importing torch and a first export; minutes only on a cold, busy disk
CACHE_SIZE = 512  # reports kept; a long editing session must not grow without bound
# how long a warm parent may take to report the end of a job it was told to stop (it reaps the
# child at once): past it the parent is stalled, and is replaced so the job still gets its verdict
END_GRACE = 15.0


class Cancelled(Exception):
    """The job was cancelled or superseded by a newer one for the same module."""


@dataclass
class _Running:
    job: Job
    id: str
    future: Future
    on_start: Callable[[], None] | None = None
    warm: Any = None  # the Warm (or Spares) it was sent to
    pid: int | None = None
    started: float = 0.0  # when its process started (monotonic); 0 until then
    timer: threading.Timer | None = None
    why_killed: str | None = None  # "timeout" | "cancelled"
    alone: bool = False  # run with no other job beside it: a neighbour's crash may have taken it down
    background: bool = False  # waits behind every verdict queued (a fix's proof, a serving run)


class Pool:
    """Run export jobs in fresh processes forked from a warm parent, ``jobs`` at a time."""

    def __init__(
        self,
        python: str | None = None,
        jobs: int | None = None,
        *,
        use_fork: bool | None = None,
        startup_timeout: float = STARTUP_TIMEOUT,
        primed: int | None = None,
        persist: bool = False,
    ) -> None:
        self.python = python or sys.executable
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.use_fork = fork_is_safe() if use_fork is None else use_fork
        self.startup_timeout = startup_timeout
        # children kept forked and warmed ahead of jobs: the latency of the next job, at
        # about 50 MB each; two cover a save followed by a dependent file's save
        self.primed = min(self.jobs, 2) if primed is None else primed
        self.cache: OrderedDict[str, ModuleReport] = OrderedDict()
        self.persist = persist
        self._environment: str | None = None
        self.launched = 0  # jobs handed to a worker (a cache hit launches nothing)
        self._lock = threading.RLock()
        self._pending: list[_Running] = []
        self._running: dict[str, _Running] = {}
        self._next_id = 0
        self._warm: Warm | Spares | None = None
        self._closed = False

    # -- public ----------------------------------------------------------------

    def submit(
        self,
        job: Job,
        on_start: Callable[[], None] | None = None,
        *,
        fresh: bool = False,
        supersede: bool = True,
        background: bool = False,
    ) -> Future:
        """A Future of the job's ModuleReport. A newer job for the same target supersedes
        (kills) an older one, whose Future then raises Cancelled (``supersede=False``: runs
        beside it, as a fix's proof does). ``fresh``: run it even where a verdict of an
        earlier run is on disk (which is then marked ``cached``). ``background``: queued
        behind every job that is not, so that work which follows a verdict never delays another's."""
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("pool is closed")
            if supersede:
                self.cancel(job.target, job.root)
            known = too_wide(job) or self._known(job, fresh)
            if known is not None:
                future.set_result(known)
                return future
            self._next_id += 1
            entry = _Running(job, str(self._next_id), future, on_start, background=background)
            later = [i for i, e in enumerate(self._pending) if e.background and not background]
            self._pending.insert(later[0] if later else len(self._pending), entry)
            self._dispatch()
        return future

    def _known(self, job: Job, fresh: bool) -> ModuleReport | None:
        if not job.key:
            return None
        if job.key in self.cache:
            self.cache.move_to_end(job.key)
            if self._on_disk() and not Verdicts(job.root).has(job.key):
                Verdicts(job.root).put(job.key, self.cache[job.key])  # known from another project's export
            return self.cache[job.key]
        stored = Verdicts(job.root).get(job.key) if self._on_disk() and not fresh else None
        stored = kept(job, stored) if stored is not None else None  # a file on disk is checked as a job's report is
        return replace(stored, cached=True) if stored is not None else None

    def remember(self, job: Job, report: ModuleReport) -> None:
        """Keep ``report`` as the verdict of ``job`` (its fixes proven since: proofs.py)."""
        if not job.key or report.cached:
            return
        with self._lock:
            if job.key in self.cache:
                self.cache[job.key] = report
        if self._on_disk():
            Verdicts(job.root).put(job.key, report)

    @property
    def environment(self) -> str:
        """What beside a project's files decides its verdicts here (``verdicts.environment``):
        part of every cache key. Asked of the interpreter once, and again after it changed."""
        if self._environment is None:
            self._environment = environment(self.python)
        return self._environment

    def _on_disk(self) -> bool:
        return self.persist and bool(self.environment)  # an interpreter that could not say what it has: memory only

    def run(self, job: Job) -> ModuleReport:
        return self.submit(job).result()

    def warm(self) -> None:
        """Start the warm parent now, so the first job does not wait for torch to import."""
        with self._lock:
            if not self._closed:
                self._warm_parent()
        # the first job's cache key asks the interpreter what it has (slow on a loaded
        # machine): asked now, beside torch's import, not on the caller's first submit
        threading.Thread(target=lambda: self.environment, name="exportlens-environment", daemon=True).start()

    def warm_unless_kept(self, paths: list[Path]) -> None:
        """``warm`` now, while the caller plans, unless a verdict cache lies in ``paths``, above or
        just below them: a check that its cache answers whole must start no worker (no torch)."""
        near = [q for p in map(Path.resolve, paths) for q in (p, *p.parents, *(p.glob("*") if p.is_dir() else ()))]
        if not (self.persist and any(Verdicts(q).folder.is_dir() for q in near)):
            self.warm()

    def cancel(self, target: str, root: str | None = None) -> bool:
        """Kill ``target``'s jobs (of the project at ``root``; None: of any), queued or
        running; their Futures raise Cancelled at once. Whether there was one."""

        def named(entry: _Running) -> bool:
            return entry.job.target == target and root in (None, entry.job.root)

        with self._lock:
            queued = [e for e in self._pending if named(e)]
            running = [e for e in self._running.values() if named(e)]
            for entry in queued:
                self._pending.remove(entry)
                entry.future.set_exception(Cancelled(target))
            for entry in running:
                self._kill(entry, "cancelled")
        return bool(queued or running)

    def cancel_job(self, future: Future) -> bool:
        """Kill the one job whose Future is ``future``, queued or running (its module's other jobs
        run on: a lowering cancelled in the editor leaves the fixes' proofs); whether it was there."""
        with self._lock:
            queued = next((e for e in self._pending if e.future is future), None)
            if queued is not None:
                self._pending.remove(queued)
                if not future.done():  # its caller may have cancelled it (asyncio's wrap_future does)
                    queued.future.set_exception(Cancelled(queued.job.target))
            # one killed already is listed until its process's end is read: nothing to cancel
            running = next((e for e in self._running.values() if e.future is future and not e.why_killed), None)
            if running is not None:
                self._kill(running, "cancelled")
        return queued is not None or running is not None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for entry in self._pending:
                entry.future.set_exception(Cancelled(entry.job.target))
            self._pending.clear()
            for entry in list(self._running.values()):
                self._kill(entry, "cancelled")
            warm, self._warm = self._warm, None
        if warm is not None:
            warm.stop()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def warm_pid(self) -> int | None:
        """The warm parent's pid, or with spares the idle one's (the next job's); None before it starts."""
        warm = self._warm
        return warm.proc.pid if isinstance(warm, Warm) else warm.pid if warm is not None else None

    def job_pids(self) -> dict[tuple[str, str], int]:
        """(root, target) -> pid of each running job's process (its process group). Without the
        lock, which a job's end holds while its report is checked and stored: the editor's status
        request must not wait for that (a dict's copy is one step under the GIL)."""
        running = self._running.copy()
        return {(e.job.root, e.job.target): e.pid for e in running.values() if e.pid is not None}

    @property
    def torch_version(self) -> str | None:
        ready = self._warm.ready if self._warm else None
        return ready.torch if ready else None

    # -- scheduling ------------------------------------------------------------

    def _dispatch(self) -> None:
        while self._pending and len(self._running) < self.jobs:
            if any(e.alone for e in self._running.values()) or (self._pending[0].alone and self._running):
                return  # a job run alone to learn whether it is the one that kills the worker
            entry = self._pending.pop(0)
            # (a job sent again after a worker restart is running already)
            if not entry.future.running() and not entry.future.set_running_or_notify_cancel():
                continue  # its caller cancelled the Future
            self._running[entry.id] = entry
            entry.warm = self._warm_parent()
            # until its process starts, only the warm parent's start is being waited for
            entry.timer = _timer(self.startup_timeout, self._not_started, entry)
            self.launched += 1
            entry.warm.send(Run(entry.id, entry.job))

    def _warm_parent(self) -> Warm | Spares:
        if self._warm is not None and not self._warm.alive():
            self._warm = None
        if self._warm is not None and self._warm.stale(self.python):
            log.info("python or torch changed: restarting the warm worker")
            self._warm.retire()  # its jobs are sent again to the new one
            self._warm = None
            self.cache.clear()  # verdicts of another torch say nothing about this one
            self._environment = None  # (and the keys made meanwhile miss the disk's)
        if self._warm is None:
            if self.use_fork:
                self._warm = Warm(self.python, self._on_message, "--primed", str(self.primed))
            else:
                self._warm = Spares(self.python, self._on_message)
        return self._warm

    def _not_started(self, entry: _Running) -> None:
        """The job's process never started: the warm parent is stuck starting up (or hung)."""
        with self._lock:
            if entry.id not in self._running or entry.pid is not None:
                return
            warm = entry.warm
        log.warning("the export worker did not start within %g s: restarting it", self.startup_timeout)
        warm.kill(f"did not start within {self.startup_timeout:g} s")

    def _kill(self, entry: _Running, why: str) -> None:
        with self._lock:
            if entry.id not in self._running or entry.why_killed:
                return
            entry.why_killed = why
            if why == "cancelled":
                # the caller does not wait for the process to die; the slot frees when it has
                entry.future.set_exception(Cancelled(entry.job.target))
            if entry.pid is not None:
                kill_tree(entry.pid)  # a spare's job: it and what it started
                self._await_end(entry)

    def _await_end(self, entry: _Running) -> None:
        """A deadline for the end of a job just killed: its warm parent reports it once it reaps
        the child, and one that does not is stalled (a spare's end is its own process's)."""
        if isinstance(entry.warm, Warm):
            if entry.timer:
                entry.timer.cancel()
            entry.timer = _timer(END_GRACE, self._not_ended, entry)

    def _not_ended(self, entry: _Running) -> None:
        with self._lock:
            if entry.id not in self._running or entry.warm is None:
                return
            warm = entry.warm
            log.warning("the export worker did not report a stopped job's end within %g s: restarting it", END_GRACE)
            warm.retired = True  # its other jobs run again on the next worker; this one ends as it was stopped
        warm.kill(f"did not report the end of a stopped job within {END_GRACE:g} s")

    def _on_message(self, warm: Any, message: Started | Done | Lost) -> None:
        with self._lock:
            if isinstance(message, Lost):  # the warm parent died: every job it held is lost
                self._lost(warm, message)
                return
            entry = self._running.get(message.id)
            if entry is None or entry.warm is not warm:
                return  # a job already finished, or now on another worker
            if isinstance(message, Started):
                self._started(entry, message.pid)
            else:
                self._finish(entry, message)

    def _started(self, entry: _Running, pid: int) -> None:
        entry.pid = pid
        entry.started = time.monotonic()
        if entry.timer:
            entry.timer.cancel()
        if entry.why_killed:  # killed before we knew its pid
            kill_tree(pid)
            self._await_end(entry)
            return
        entry.timer = _timer(entry.job.timeout, self._kill, entry, "timeout")
        if entry.on_start:
            entry.on_start()

    def _lost(self, warm: Any, lost: Lost) -> None:
        held = [e for e in self._running.values() if e.warm is warm]
        # one of several jobs killed the warm parent, and with it the others: which one is
        # unknown, so each runs again alone, and gets its own verdict (a loop its EL501)
        shared = len([e for e in held if e.pid is not None and not e.why_killed]) > 1
        for e in held:
            if warm.retired and not e.why_killed:
                self._requeue(e)
            elif shared and e.pid is not None and not e.why_killed and not e.alone:
                self._requeue(e, alone=True)
            else:
                self._finish(e, lost)
        self._dispatch()

    def _requeue(self, entry: _Running, alone: bool = False) -> None:
        self._running.pop(entry.id, None)
        if entry.timer:
            entry.timer.cancel()
        self._pending.insert(
            0,
            _Running(
                entry.job,
                entry.id,
                entry.future,
                entry.on_start,
                alone=alone or entry.alone,
                background=entry.background,
            ),
        )

    def _finish(self, entry: _Running, end: Done | Lost) -> None:
        self._running.pop(entry.id, None)
        if entry.timer:
            entry.timer.cancel()
        if entry.why_killed != "cancelled":
            seconds = time.monotonic() - entry.started if entry.started else 0.0
            report, cacheable = outcome(entry.job, end, entry.why_killed, seconds)
            if entry.job.key and cacheable and isinstance(report, ModuleReport):  # (a tree is never cacheable)
                self.cache[entry.job.key] = report
                while len(self.cache) > CACHE_SIZE:
                    self.cache.popitem(last=False)
                if self._on_disk():
                    Verdicts(entry.job.root).put(entry.job.key, report)
            entry.future.set_result(report)
        self._dispatch()


def _timer(seconds: float, function: Callable[..., None], *args: Any) -> threading.Timer:
    timer = threading.Timer(seconds, function, args)
    timer.daemon = True
    timer.start()
    return timer
