"""Isolated warm workers, seen from the process that owns them (no torch here).

One warm parent (``worker.py``) per pool forks a fresh child for each job. The
owner (the CLI or the LSP server) enforces each job's wall-clock timeout and
cancellation by killing the child's whole process group, turns crashes into
findings, and keeps a cache of results keyed by everything that can change a
verdict. Where fork after importing torch is unsafe (macOS, Windows), the pool
keeps pre-started single-job spares instead.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import codes
from .report import Finding, ModuleReport, Status, from_dict

log = logging.getLogger(__name__)

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
MEMORY_MESSAGES = ("can't allocate memory", "MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")


class Cancelled(Exception):
    """The job was cancelled or superseded by a newer one for the same module."""


@dataclass(frozen=True)
class Job:
    """One module to export: everything the worker needs, as plain data."""

    root: str
    target: str  # "path.py:Class"
    class_line: int  # where crash and timeout findings go
    options: dict[str, Any] = field(default_factory=dict)  # exporter.run.Options fields
    timeout: float = 60.0
    memory_limit: int | None = 8 << 30
    key: str = ""  # cache key; "" = do not cache

    @property
    def path(self) -> str:
        return self.target.rsplit(":", 1)[0]


@dataclass
class _Running:
    job: Job
    id: str
    future: Future
    on_start: Callable[[], None] | None = None
    pid: int | None = None
    started: float = 0.0
    timer: threading.Timer | None = None
    why_killed: str | None = None  # "timeout" | "cancelled"


def fork_is_safe() -> bool:
    return sys.platform.startswith("linux")


class Pool:
    """Run export jobs in fresh processes forked from a warm parent, ``jobs`` at a time."""

    def __init__(self, python: str | None = None, jobs: int | None = None, *, use_fork: bool | None = None) -> None:
        self.python = python or sys.executable
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.use_fork = fork_is_safe() if use_fork is None else use_fork
        self.cache: dict[str, ModuleReport] = {}
        self._lock = threading.RLock()
        self._pending: list[_Running] = []
        self._running: dict[str, _Running] = {}
        self._next_id = 0
        self._warm: _Warm | None = None
        self._closed = False

    # -- public ----------------------------------------------------------------

    def submit(self, job: Job, on_start: Callable[[], None] | None = None) -> Future:
        """A Future of the job's ModuleReport. A newer job for the same target supersedes
        (kills) an older one, whose Future then raises Cancelled."""
        future: Future = Future()
        if job.key and job.key in self.cache:
            future.set_result(self.cache[job.key])
            return future
        with self._lock:
            if self._closed:
                raise RuntimeError("pool is closed")
            self.cancel(job.target)
            self._next_id += 1
            self._pending.append(_Running(job, str(self._next_id), future, on_start))
            self._dispatch()
        return future

    def run(self, job: Job) -> ModuleReport:
        return self.submit(job).result()

    def cancel(self, target: str) -> None:
        with self._lock:
            for entry in [e for e in self._pending if e.job.target == target]:
                self._pending.remove(entry)
                entry.future.set_exception(Cancelled(target))
            for entry in [e for e in self._running.values() if e.job.target == target]:
                self._kill(entry, "cancelled")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for entry in self._pending:
                entry.future.set_exception(Cancelled(entry.job.target))
            self._pending.clear()
            for entry in list(self._running.values()):
                self._kill(entry, "cancelled")
            if self._warm is not None:
                self._warm.stop()
                self._warm = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def warm(self) -> None:
        """Start the warm parent now (torch imports while nothing waits on it)."""
        with self._lock:
            if not self._closed:
                self._warm_parent()

    @property
    def warm_pid(self) -> int | None:
        warm = self._warm
        return warm.proc.pid if isinstance(warm, _Warm) else None

    @property
    def torch_version(self) -> str | None:
        return self._warm.ready.get("torch") if self._warm and self._warm.ready else None

    # -- scheduling ------------------------------------------------------------

    def _dispatch(self) -> None:
        while self._pending and len(self._running) < self.jobs:
            entry = self._pending.pop(0)
            if not entry.future.set_running_or_notify_cancel():
                continue
            self._running[entry.id] = entry
            warm = self._warm_parent()
            request = {
                "op": "run",
                "job": entry.id,
                "root": entry.job.root,
                "target": entry.job.target,
                "options": entry.job.options,
                "memory_limit": entry.job.memory_limit,
            }
            entry.started = time.monotonic()
            entry.timer = threading.Timer(entry.job.timeout, self._kill, (entry, "timeout"))
            entry.timer.daemon = True
            entry.timer.start()
            warm.send(request)

    def _warm_parent(self) -> _Warm:
        if self._warm is not None and not self._warm.alive():
            self._warm = None
        if self._warm is not None and self._warm.stale(self.python):
            log.info("python or torch changed: restarting the warm worker")
            self._warm.stop()
            self._warm = None
            self.cache.clear()  # verdicts of another torch say nothing about this one
        if self._warm is None:
            self._warm = _Warm(self.python, self._on_event) if self.use_fork else _Spares(self.python, self._on_event)
        return self._warm

    def _kill(self, entry: _Running, why: str) -> None:
        with self._lock:
            if entry.id not in self._running or entry.why_killed:
                return
            entry.why_killed = why
            if entry.pid is not None:
                _killpg(entry.pid)

    def _on_event(self, event: dict[str, Any]) -> None:
        with self._lock:
            entry = self._running.get(str(event.get("job")))
            if event["event"] == "started" and entry is not None:
                entry.pid = event["pid"]
                if entry.why_killed:  # killed before we knew its pid
                    _killpg(entry.pid)
                if entry.on_start:
                    entry.on_start()
                return
            if event["event"] == "lost":  # the warm parent died: every job it held is lost
                for e in list(self._running.values()):
                    self._finish(e, {"event": "done", "exit": None, "signal": None, "output": "", "lost": event.get("why", "")})
                return
            if event["event"] == "done" and entry is not None:
                self._finish(entry, event)

    def _finish(self, entry: _Running, event: dict[str, Any]) -> None:
        self._running.pop(entry.id, None)
        if entry.timer:
            entry.timer.cancel()
        if entry.why_killed == "cancelled":
            entry.future.set_exception(Cancelled(entry.job.target))
        else:
            report = outcome(entry.job, event, entry.why_killed, time.monotonic() - entry.started)
            if entry.job.key and not _transient(report):
                self.cache[entry.job.key] = report
            entry.future.set_result(report)
        self._dispatch()


def _transient(report: ModuleReport) -> bool:
    """Timeouts and crashes may not happen again: never cache them."""
    return any(f.kind.value in ("timeout", "crash") for f in report.findings)


def _killpg(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError, OSError):
            continue


# -- results ---------------------------------------------------------------------


def outcome(job: Job, event: dict[str, Any], why_killed: str | None, seconds: float) -> ModuleReport:
    """A worker's "done" event as a ModuleReport: the report it wrote, or a finding
    that says how the process ended, with the last lines it printed."""
    output = _tail(event.get("output") or "")

    def failed(code: codes.Code, message: str) -> ModuleReport:
        detail = f"last output:\n{output}" if output else ""
        finding = codes.finding(code, message, job.path, job.class_line, detail=detail)
        return ModuleReport(job.target, Status.FAILED, (finding,), seconds=seconds)

    shown = f"; it printed: {output.splitlines()[-1][:200]}" if output.strip() else ""
    if why_killed == "timeout":
        return failed(codes.TIMEOUT, f"export did not finish within {job.timeout:g} s and was stopped{shown}")
    if event.get("report") is not None:
        report = from_dict(ModuleReport, event["report"])
        return _memory_findings(report, job)
    limit = _human(job.memory_limit)
    if event.get("memory"):
        return failed(codes.MEMORY, f"export needed more than the memory limit of {limit}")
    if event.get("lost"):
        return failed(codes.CRASH, f"the warm worker process died ({event['lost']})")
    if "exited" in event:
        return failed(codes.CRASH, f"the module {event.get('message', 'exited')} while exporting{shown}")
    if event.get("internal"):
        return failed(codes.INTERNAL, f"exportlens failed: {event['internal'].strip().splitlines()[-1]}")
    sig = event.get("signal")
    if sig:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        why = " (out of memory?)" if sig == signal.SIGKILL else ""
        return failed(codes.CRASH, f"the export process was killed by {name}{why}{shown}")
    return failed(codes.CRASH, f"the export process exited with status {event.get('exit')} before reporting{shown}")


def _memory_findings(report: ModuleReport, job: Job) -> ModuleReport:
    """An allocation refused under the cap reads as the user's error; say what it is."""
    out = []
    for f in report.findings:
        if f.kind.value != "spec-error" and any(m in f.message or m in f.detail for m in MEMORY_MESSAGES):
            f = codes.finding(codes.MEMORY, f"export needed more than the memory limit of {_human(job.memory_limit)} ({f.message})", f.path, f.line, column=f.column, end_line=f.end_line, end_column=f.end_column, detail=f.detail)
        out.append(f)
    return ModuleReport(report.target, report.status, tuple(out), report.summary, report.spec_source, report.seconds, report.torch_version)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _human(n: int | None) -> str:
    if not n:
        return "none"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n}B"


# -- the warm processes ------------------------------------------------------------------


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


class _Warm:
    """A started worker process speaking the JSON-lines protocol."""

    def __init__(self, python: str, on_event: Callable[[dict[str, Any]], None], *args: str) -> None:
        self.python = python
        self.on_event = on_event
        self.ready: dict[str, Any] = {}
        self._ready = threading.Event()
        self._torch_stamp: float | None = None
        self.proc = subprocess.Popen(
            [python, "-m", "exportlens.exporter.worker", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if not os.environ.get("EXPORTLENS_DEBUG") else None,
            env=_worker_env(),
            start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not theirs
            close_fds=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True, name="exportlens-worker-reader")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "ready":
                self.ready = event
                self._torch_stamp = _stamp(event.get("torch_file"))
                self._ready.set()
                continue
            self.on_event(event)
        self._ready.set()
        self.on_event({"event": "lost", "why": f"exit status {self.proc.wait()}"})

    def send(self, message: dict[str, Any]) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader reports the loss

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stale(self, python: str) -> bool:
        """A different interpreter asked for, or torch reinstalled under this one."""
        if python != self.python:
            return True
        return bool(self.ready) and _stamp(self.ready.get("torch_file")) != self._torch_stamp

    def stop(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()  # end of input: it kills its children and exits
            self.proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, OSError, ValueError):
            _killpg(self.proc.pid)
            self.proc.wait()


def _stamp(torch_file: str | None) -> float | None:
    if not torch_file:
        return None
    try:
        return (Path(torch_file).parent / "version.py").stat().st_mtime
    except OSError:
        return None


class _Spares:
    """Platforms without a safe fork: one pre-started, pre-warmed process per job."""

    def __init__(self, python: str, on_event: Callable[[dict[str, Any]], None]) -> None:
        self.python = python
        self.on_event = on_event
        self._lock = threading.Lock()
        self._spare = self._start()
        self._busy: list[_Warm] = []

    def _start(self) -> _Warm:
        return _Warm(self.python, self._event, "--spare")

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("event") == "lost":
            return  # a spare ends after its one job; its "done" already came
        self.on_event(event)

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            spare, self._spare = self._spare, self._start()
            self._busy = [w for w in self._busy if w.alive()] + [spare]
        spare.send(message)  # it reads its request once warm

    @property
    def ready(self) -> dict[str, Any]:
        return self._spare.ready

    def alive(self) -> bool:
        return True

    def stale(self, python: str) -> bool:
        return python != self.python

    def stop(self) -> None:
        for w in [self._spare, *self._busy]:
            w.stop()
