"""Isolated warm workers, seen from the process that owns them (no torch here).

One warm parent (``worker.py``) per pool forks a fresh child for each job. The
owner (the CLI or the LSP server) enforces each job's wall-clock timeout and
cancellation by killing the child's whole process group, turns crashes into
findings, and keeps a cache of results keyed by everything that can change a
verdict. Where fork after importing torch is unsafe (macOS, Windows), the pool
keeps pre-started single-job spares instead.

A job's clock starts when its process starts, not when it is queued: the warm
parent's own start (importing torch, a first export) is bounded separately by
``startup_timeout``.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import codes
from ..core.report import Finding, ModuleReport, Status, from_dict

log = logging.getLogger(__name__)

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
MEMORY_MESSAGES = ("can't allocate memory", "MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")
STARTUP_TIMEOUT = 120.0  # importing torch and a first export; minutes only on a cold, busy disk
CACHE_SIZE = 512  # reports kept; a long editing session must not grow without bound
STDERR_TAIL = 8 * 1024


class Cancelled(Exception):
    """The job was cancelled or superseded by a newer one for the same module."""


@dataclass(frozen=True)
class Job:
    """One module to export: everything the worker needs, as plain data."""

    root: str
    target: str  # "path.py:Class"
    class_line: int  # where crash and timeout findings go: the class name
    options: dict[str, Any] = field(default_factory=dict)  # exporter.run.Options fields
    timeout: float = 60.0
    memory_limit: int | None = 8 << 30
    key: str = ""  # cache key; "" = do not cache
    sources: dict[str, str] = field(default_factory=dict)  # project-relative path -> unsaved text
    class_column: int = 1
    class_end_column: int | None = None
    plan: str = ""  # the owner's static plan of this module (batch.pack_plan); "" = the worker plans

    @property
    def path(self) -> str:
        return self.target.rsplit(":", 1)[0]


@dataclass
class _Running:
    job: Job
    id: str
    future: Future
    on_start: Callable[[], None] | None = None
    warm: Any = None  # the _Warm (or _Spares) it was sent to
    pid: int | None = None
    started: float = 0.0  # when its process started (monotonic); 0 until then
    timer: threading.Timer | None = None
    why_killed: str | None = None  # "timeout" | "cancelled"


def fork_is_safe() -> bool:
    return sys.platform.startswith("linux")


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
    ) -> None:
        self.python = python or sys.executable
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.use_fork = fork_is_safe() if use_fork is None else use_fork
        self.startup_timeout = startup_timeout
        # children kept forked and warmed ahead of jobs: the latency of the next job, at
        # about 50 MB each; two cover a save followed by a dependent file's save
        self.primed = min(self.jobs, 2) if primed is None else primed
        self.cache: OrderedDict[str, ModuleReport] = OrderedDict()
        self.launched = 0  # jobs handed to a worker (a cache hit launches nothing)
        self._lock = threading.RLock()
        self._pending: list[_Running] = []
        self._running: dict[str, _Running] = {}
        self._next_id = 0
        self._warm: _Warm | _Spares | None = None
        self._closed = False

    # -- public ----------------------------------------------------------------

    def submit(self, job: Job, on_start: Callable[[], None] | None = None) -> Future:
        """A Future of the job's ModuleReport. A newer job for the same target supersedes
        (kills) an older one, whose Future then raises Cancelled."""
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("pool is closed")
            self.cancel(job.target)
            if job.key and job.key in self.cache:
                self.cache.move_to_end(job.key)
                future.set_result(self.cache[job.key])
                return future
            self._next_id += 1
            self._pending.append(_Running(job, str(self._next_id), future, on_start))
            self._dispatch()
        return future

    def run(self, job: Job) -> ModuleReport:
        return self.submit(job).result()

    def warm(self) -> None:
        """Start the warm parent now, so the first job does not wait for torch to import."""
        with self._lock:
            if not self._closed:
                self._warm_parent()

    def cancel(self, target: str) -> None:
        """Kill ``target``'s job, queued or running; its Future raises Cancelled at once."""
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
            warm, self._warm = self._warm, None
        if warm is not None:
            warm.stop()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def warm_pid(self) -> int | None:
        """The warm parent's pid (None before it starts, or with spares)."""
        warm = self._warm
        return warm.proc.pid if isinstance(warm, _Warm) else None

    def job_pids(self) -> dict[str, int]:
        """target -> pid of each running job's process (its process group)."""
        with self._lock:
            return {e.job.target: e.pid for e in self._running.values() if e.pid is not None}

    @property
    def torch_version(self) -> str | None:
        return self._warm.ready.get("torch") if self._warm and self._warm.ready else None

    # -- scheduling ------------------------------------------------------------

    def _dispatch(self) -> None:
        while self._pending and len(self._running) < self.jobs:
            entry = self._pending.pop(0)
            # (a job sent again after a worker restart is running already)
            if not entry.future.running() and not entry.future.set_running_or_notify_cancel():
                continue  # its caller cancelled the Future
            self._running[entry.id] = entry
            entry.warm = self._warm_parent()
            # until its process starts, only the warm parent's start is being waited for
            entry.timer = _timer(self.startup_timeout, self._not_started, entry)
            self.launched += 1
            entry.warm.send(
                {
                    "op": "run",
                    "job": entry.id,
                    "root": entry.job.root,
                    "target": entry.job.target,
                    "options": entry.job.options,
                    "memory_limit": entry.job.memory_limit,
                    "sources": entry.job.sources,
                    "plan": entry.job.plan,
                }
            )

    def _warm_parent(self) -> _Warm | _Spares:
        if self._warm is not None and not self._warm.alive():
            self._warm = None
        if self._warm is not None and self._warm.stale(self.python):
            log.info("python or torch changed: restarting the warm worker")
            self._warm.retire()  # its jobs are sent again to the new one
            self._warm = None
            self.cache.clear()  # verdicts of another torch say nothing about this one
        if self._warm is None:
            if self.use_fork:
                self._warm = _Warm(self.python, self._on_event, "--primed", str(self.primed))
            else:
                self._warm = _Spares(self.python, self._on_event)
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
                _killpg(entry.pid)

    def _on_event(self, warm: Any, event: dict[str, Any]) -> None:
        with self._lock:
            entry = self._running.get(str(event.get("job")))
            if entry is not None and entry.warm is not warm:
                return  # an event from a worker this job is no longer on
            if event["event"] == "started" and entry is not None:
                entry.pid = event["pid"]
                entry.started = time.monotonic()
                if entry.timer:
                    entry.timer.cancel()
                if entry.why_killed:  # killed before we knew its pid
                    _killpg(entry.pid)
                    return
                entry.timer = _timer(entry.job.timeout, self._kill, entry, "timeout")
                if entry.on_start:
                    entry.on_start()
                return
            if event["event"] == "lost":  # the warm parent died: every job it held is lost
                for e in [e for e in self._running.values() if e.warm is warm]:
                    if warm.retired and not e.why_killed:
                        self._requeue(e)
                    else:
                        self._finish(
                            e,
                            {
                                "event": "done",
                                "lost": event.get("why", ""),
                                "stderr": event.get("stderr", ""),
                                "startup": event.get("startup", False),
                            },
                        )
                self._dispatch()
                return
            if event["event"] == "done" and entry is not None:
                self._finish(entry, event)

    def _requeue(self, entry: _Running) -> None:
        self._running.pop(entry.id, None)
        if entry.timer:
            entry.timer.cancel()
        self._pending.insert(0, _Running(entry.job, entry.id, entry.future, entry.on_start))

    def _finish(self, entry: _Running, event: dict[str, Any]) -> None:
        self._running.pop(entry.id, None)
        if entry.timer:
            entry.timer.cancel()
        if entry.why_killed != "cancelled":
            seconds = time.monotonic() - entry.started if entry.started else 0.0
            report, cacheable = outcome(entry.job, event, entry.why_killed, seconds)
            if entry.job.key and cacheable:
                self.cache[entry.job.key] = report
                while len(self.cache) > CACHE_SIZE:
                    self.cache.popitem(last=False)
            entry.future.set_result(report)
        self._dispatch()


def _timer(seconds: float, function: Callable[..., None], *args: Any) -> threading.Timer:
    timer = threading.Timer(seconds, function, args)
    timer.daemon = True
    timer.start()
    return timer


def _killpg(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError, OSError):
            continue


# -- results ---------------------------------------------------------------------


def outcome(job: Job, event: dict[str, Any], why_killed: str | None, seconds: float) -> tuple[ModuleReport, bool]:
    """A worker's "done" event as a ModuleReport: the report it wrote, or a finding
    that says how the process ended, with the last lines it printed. The flag says
    whether the verdict may be cached: only a report the export itself wrote."""
    output = _tail(event.get("output") or "")
    fault = event.get("fault") or ""
    where = _crash_site(fault, job.root)

    def failed(code: codes.Code, message: str, detail: str = "") -> tuple[ModuleReport, bool]:
        parts = [detail, f"last output:\n{output}" if output else "", f"Python stack at the crash:\n{fault}" if fault else ""]
        finding = codes.finding(
            code,
            message,
            job.path,
            job.class_line,
            column=job.class_column,
            end_line=job.class_line if job.class_end_column else None,
            end_column=job.class_end_column,
            detail="\n\n".join(p for p in parts if p),
        )
        return ModuleReport(job.target, Status.FAILED, (finding,), seconds=seconds), False

    shown = f"; it printed: {output.splitlines()[-1][:200]}" if output.strip() else ""
    if why_killed == "timeout":
        return failed(codes.TIMEOUT, f"export did not finish within {job.timeout:g} s and was stopped{shown}")
    if event.get("report") is not None:
        report, converted = _memory_findings(from_dict(ModuleReport, event["report"]), job)
        return report, not converted
    limit = _human(job.memory_limit)
    if event.get("memory"):
        return failed(codes.MEMORY, f"export needed more than the memory limit of {limit}{shown}")
    if event.get("lost"):
        stderr = (event.get("stderr") or "").strip()
        if event.get("startup"):
            return failed(
                codes.TIMEOUT, f"the export worker {event['lost']} (importing torch and a first export); is the machine very busy?", stderr
            )
        last = f": {stderr.splitlines()[-1][:200]}" if stderr else ""
        return failed(codes.CRASH, f"the export worker process died ({event['lost']}){last}", stderr)
    if "exited" in event:
        return failed(codes.CRASH, f"the module {event.get('message', 'exited')} while exporting{shown}")
    if event.get("internal"):
        return failed(codes.INTERNAL, f"exportlens failed: {event['internal'].strip().splitlines()[-1]}", event["internal"])
    sig = event.get("signal")
    if sig:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        why = " (out of memory?)" if sig == signal.SIGKILL else ""
        return failed(codes.CRASH, f"the export process was killed by {name}{why}{where}{shown}")
    return failed(codes.CRASH, f"the export process exited with status {event.get('exit')} before reporting{where}{shown}")


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)')


def _crash_site(fault: str, root: str) -> str:
    """ " at net.py:6 in forward": the innermost frame of the user's in faulthandler's report."""
    prefix = os.path.join(os.path.realpath(root), "")
    for line in fault.splitlines():  # most recent call first
        m = _FRAME.match(line)
        if m and os.path.realpath(m["file"]).startswith(prefix) and "site-packages" not in m["file"]:
            return f" at {os.path.relpath(os.path.realpath(m['file']), prefix)}:{m['line']} in {m['name']}"
    return ""


def _memory_findings(report: ModuleReport, job: Job) -> tuple[ModuleReport, bool]:
    """An allocation refused under the cap reads as the user's error; say what it is.
    True when a finding was converted (the verdict depends on the cap: not cached)."""
    out: list[Finding] = []
    converted = False
    for f in report.findings:
        if f.kind.value != "spec-error" and any(m in f.message or m in f.detail for m in MEMORY_MESSAGES):
            converted = True
            f = codes.finding(
                codes.MEMORY,
                f"export needed more than the memory limit of {_human(job.memory_limit)} ({f.message})",
                f.path,
                f.line,
                column=f.column,
                end_line=f.end_line,
                end_column=f.end_column,
                detail=f.detail,
            )
        out.append(f)
    if not converted:
        return report, False
    return ModuleReport(
        report.target, report.status, tuple(out), report.summary, report.spec_source, report.seconds, report.torch_version
    ), True


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
    env["PYTHONUNBUFFERED"] = "1"  # a user's last prints before a crash must reach us
    return env


class _Warm:
    """A started worker process speaking the JSON-lines protocol. Requests go through a
    queue and a writer thread, so a full pipe never blocks the pool's lock."""

    def __init__(self, python: str, on_event: Callable[[Any, dict[str, Any]], None], *args: str) -> None:
        self.python = python
        self.on_event = on_event
        self.ready: dict[str, Any] = {}
        self.retired = False  # replaced on purpose: its jobs are sent again elsewhere
        self.job: str | None = None  # a spare's one job
        self._why_killed = ""
        self._stderr = bytearray()
        self._torch_stamp: float | None = None
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        debug = bool(os.environ.get("EXPORTLENS_DEBUG"))
        self.proc = subprocess.Popen(
            [python, "-m", "exportlens.exporter.workers.worker", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.PIPE,
            env=_worker_env(),
            start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not theirs
            close_fds=True,
        )
        threads = [(self._read, "reader"), (self._write, "writer")] + ([] if debug else [(self._read_stderr, "stderr")])
        for target, name in threads:
            threading.Thread(target=target, daemon=True, name=f"exportlens-worker-{name}").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "ready":
                self._torch_stamp = _stamp(event.get("torch_file"))
                self.ready = event
                continue
            self.on_event(self, event)
        status = self.proc.wait()
        time.sleep(0.05)  # let the stderr reader take the last lines
        why = self._why_killed or (f"exit status {status}" if status >= 0 else f"killed by {_signal_name(-status)}")
        self.on_event(
            self,
            {
                "event": "lost",
                "why": why,
                "stderr": _tail(self._stderr.decode("utf-8", "replace")),
                "startup": bool(self._why_killed),
                "status": status,
            },
        )

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL)]

    def _write(self) -> None:
        while (data := self._outbox.get()) is not None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return  # the reader reports the loss
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]  # end of input: it kills its children and exits
        except OSError:
            pass

    def send(self, message: dict[str, Any]) -> None:
        self._outbox.put((json.dumps(message) + "\n").encode())

    def alive(self) -> bool:
        return self.proc.poll() is None and not self._why_killed

    def stale(self, python: str) -> bool:
        """A different interpreter asked for, or torch reinstalled under this one."""
        if python != self.python:
            return True
        return bool(self.ready) and _stamp(self.ready.get("torch_file")) != self._torch_stamp

    def kill(self, why: str) -> None:
        self._why_killed = why
        _killpg(self.proc.pid)

    def retire(self) -> None:
        self.retired = True
        threading.Thread(target=self.stop, daemon=True).start()

    def stop(self) -> None:
        self._outbox.put(None)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _killpg(self.proc.pid)
            self.proc.wait()


def _signal_name(sig: int) -> str:
    return signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"


def _stamp(torch_file: str | None) -> float | None:
    if not torch_file:
        return None
    try:
        return (Path(torch_file).parent / "version.py").stat().st_mtime
    except OSError:
        return None


class _Spares:
    """Platforms without a safe fork: one pre-started, pre-warmed process per job."""

    def __init__(self, python: str, on_event: Callable[[Any, dict[str, Any]], None]) -> None:
        self.python = python
        self.on_event = on_event
        self.retired = False
        self._lock = threading.Lock()
        self._spare = self._start()
        self._busy: list[_Warm] = []

    def _start(self) -> _Warm:
        return _Warm(self.python, self._event, "--spare")

    def _event(self, warm: _Warm, event: dict[str, Any]) -> None:
        if event.get("event") == "done":
            warm.job = None
        elif event.get("event") == "lost":
            if warm.job is None:
                return  # a spare ends after its one job; its "done" already came
            # it died running the job (a segfault, os._exit): that is the job's end
            status = event.get("status") or 0
            event = {
                "event": "done",
                "job": warm.job,
                "output": event.get("stderr", ""),
                "exit": status if status >= 0 else None,
                "signal": -status if status < 0 else None,
            }
        self.on_event(self, event)

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            spare, self._spare = self._spare, self._start()
            self._busy = [w for w in self._busy if w.alive()] + [spare]
        spare.job = message["job"]
        spare.send(message)  # it reads its request once warm

    @property
    def ready(self) -> dict[str, Any]:
        return self._spare.ready

    def alive(self) -> bool:
        return True

    def stale(self, python: str) -> bool:
        return python != self.python

    def kill(self, why: str) -> None:
        for w in [self._spare, *self._busy]:
            w.kill(why)

    def retire(self) -> None:
        self.retired = True
        threading.Thread(target=self.stop, daemon=True).start()

    def stop(self) -> None:
        for w in [self._spare, *self._busy]:
            w.stop()
