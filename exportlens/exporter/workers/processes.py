"""The worker processes, seen from their owner (no torch): a warm parent that forks a
child per job, or, where fork after importing torch is unsafe, one pre-started spare
per job. Each speaks the protocol over its stdin and stdout; what it says goes to the
pool's ``on_message(process, message)``."""

from __future__ import annotations

import logging
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ... import isolation
from .outcome import signal_name, tail
from .protocol import VERSION, CodecError, Died, Done, Lost, Ready, Run, Started, decode, encode_run

log = logging.getLogger(__name__)

STDERR_TAIL = 8 * 1024

OnMessage = Callable[[Any, "Started | Done | Lost"], None]


def killpg(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError, OSError):
            continue


def _stamp(torch_file: str | None) -> float | None:
    """When torch was installed: a reinstall under the same interpreter restarts the worker."""
    if not torch_file:
        return None
    try:
        return (Path(torch_file).parent / "version.py").stat().st_mtime
    except OSError:
        return None


class Warm:
    """A started worker process. Requests go through a queue and a writer thread, so a
    full pipe never blocks the pool's lock."""

    def __init__(self, python: str, on_message: OnMessage, *args: str) -> None:
        self.python = python
        self.on_message = on_message
        self.ready: Ready | None = None
        self.retired = False  # replaced on purpose: its jobs are sent again elsewhere
        self.job: str | None = None  # a spare's one job
        self._why_killed = ""
        self._stderr = bytearray()
        self._torch_stamp: float | None = None
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        debug = bool(os.environ.get("EXPORTLENS_DEBUG"))
        # its jobs' scratch folders go in here: removed once it has exited, however it ended (scratch.py)
        self.scratch = tempfile.mkdtemp(prefix="exportlens-worker-")
        self.proc = subprocess.Popen(
            # importing nothing from the current folder: the parent is not confined, and only
            # a job's child, once confined, imports the project (isolation, sandbox)
            isolation.command(python, "exportlens.exporter.workers.worker", *args, "--scratch", self.scratch),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.PIPE,
            env=isolation.environment(PYTHONUNBUFFERED="1"),  # a user's last prints before a crash must reach us
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
                message = decode(line, Ready, Started, Done)
            except CodecError as e:
                log.warning("the export worker said something that is not the protocol (%s): %r", e, line[:200])
                continue
            if isinstance(message, Ready):
                self._ready(message)
            else:
                self.on_message(self, message)
        status = self.proc.wait()
        self._remove_scratch()
        time.sleep(0.05)  # let the stderr reader take the last lines
        why = self._why_killed or (f"exit status {status}" if status >= 0 else f"killed by {signal_name(-status)}")
        stderr = tail(self._stderr.decode("utf-8", "replace"))
        self.on_message(self, Lost(why, stderr, startup=bool(self._why_killed), status=status))

    def _ready(self, ready: Ready) -> None:
        if ready.version != VERSION:  # an exportlens of another version in that environment
            self.kill(f"speaks worker protocol {ready.version}, not {VERSION}: install the same exportlens version there")
            return
        self._torch_stamp = _stamp(ready.torch_file)
        self.ready = ready

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL)]

    def _write(self) -> None:
        assert self.proc.stdin is not None
        while (data := self._outbox.get()) is not None:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return  # the reader reports the loss
        try:
            self.proc.stdin.close()  # end of input: it kills its children and exits
        except OSError:
            pass

    def send(self, run: Run) -> None:
        self._outbox.put(encode_run(run))

    def alive(self) -> bool:
        return self.proc.poll() is None and not self._why_killed

    def stale(self, python: str) -> bool:
        """A different interpreter asked for, or torch reinstalled under this one."""
        if python != self.python:
            return True
        return self.ready is not None and _stamp(self.ready.torch_file) != self._torch_stamp

    def kill(self, why: str) -> None:
        self._why_killed = why
        killpg(self.proc.pid)

    def retire(self) -> None:
        self.retired = True
        threading.Thread(target=self.stop, daemon=True).start()

    def stop(self) -> None:
        if self.ready is None:  # still importing torch: it reads no Shutdown until then, and has nothing to finish
            killpg(self.proc.pid)
        else:
            self._outbox.put(None)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                killpg(self.proc.pid)
        self.proc.wait()
        self._remove_scratch()  # here too: the reader, a daemon thread, may not get to it before we exit

    def _remove_scratch(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


class Spares:
    """Platforms without a safe fork: one pre-started, pre-warmed process per job."""

    def __init__(self, python: str, on_message: OnMessage) -> None:
        self.python = python
        self.on_message = on_message
        self.retired = False
        self._lock = threading.Lock()
        self._spare = self._start()
        self._busy: list[Warm] = []

    def _start(self) -> Warm:
        return Warm(self.python, self._message, "--spare")

    def _message(self, warm: Warm, message: Started | Done | Lost) -> None:
        if isinstance(message, Done):
            warm.job = None
        elif isinstance(message, Lost):
            if warm.job is None:
                return  # a spare ends after its one job; its Done already came
            # it died running the job (a segfault, os._exit): that is the job's end
            status = message.status or 0
            died = Died(status=status if status >= 0 else None, signal=-status if status < 0 else None)
            message = Done(warm.job, died, output=message.stderr)
        self.on_message(self, message)

    def send(self, run: Run) -> None:
        with self._lock:
            spare, self._spare = self._spare, self._start()
            self._busy = [w for w in self._busy if w.alive()] + [spare]
        spare.job = run.id
        spare.send(run)  # it reads its request once warm

    @property
    def ready(self) -> Ready | None:
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
