"""The worker processes, seen from their owner (no torch): a warm parent that forks a
child per job, or, where fork after importing torch is unsafe, one pre-started spare
per job. Each speaks the protocol over its stdin and stdout; what it says goes to the
pool's ``on_message(process, message)``."""

from __future__ import annotations

import io
import logging
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ... import isolation
from .outcome import signal_name, tail
from .platform import kill_group_left, kill_tree, killpg, new_group
from .protocol import (
    DONE_MAX,
    ENDS,
    FAULT,
    OUTPUT_ENDS,
    VERSION,
    CodecError,
    Died,
    Done,
    Encoded,
    Lines,
    Lost,
    Ready,
    Run,
    Started,
    decode,
    encode_run,
    ended,
)

log = logging.getLogger(__name__)

STDERR_TAIL = 64 * 1024  # a spare's job's output comes this way: as much as a forked job's

OnMessage = Callable[[Any, "Started | Done | Lost"], None]


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
        self.started = False  # a spare said its job started
        self._why_killed = ""
        self._stderr = bytearray()
        self._stderr_closed = threading.Event()
        self.output_ended = threading.Event()  # a spare said where its job's output ends
        self.output = ""  # a spare's job's output, once it ended
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
            **new_group(),  # a Ctrl-C in the terminal is ours to handle, not theirs
            close_fds=True,
        )
        threads = [(self._read, "reader"), (self._write, "writer")] + ([] if debug else [(self._read_stderr, "stderr")])
        for target, name in threads:
            threading.Thread(target=target, daemon=True, name=f"exportlens-worker-{name}").start()

    def _forged_end(self, line: bytes) -> Done | None:
        """A spare's job's End that does not decode (its user code wrote it): that job's crash,
        as the warm parent's pass-through makes it (``ended``)."""
        encoded = Encoded.of(line.decode("utf-8", "replace").rstrip("\n")) if self.job else None
        return Done(self.job or "", encoded) if encoded is not None else None

    def _lines(self) -> Iterator[bytes]:
        """Its stdout's lines, each bounded: a spare's job runs in the process that writes them,
        and one past the bound stops it (a warm parent passes on a job's End, bounded there)."""
        stdout = self.proc.stdout
        assert isinstance(stdout, io.BufferedReader)  # Popen's, buffered (typeshed says only IO[bytes])
        lines = Lines(DONE_MAX)
        for chunk in iter(lambda: stdout.read1(1 << 16), b""):
            was = lines.overlong
            yield from lines.feed(chunk)
            if lines.overlong and not was:  # (what follows is read, and dropped, until it is gone)
                self._overlong()
        if lines.pending:
            yield bytes(lines.pending)

    def _overlong(self) -> None:
        if self.job is not None and self.started:  # the spare's job wrote it: that job's crash
            self.on_message(self, Done(self.job, Died(overlong=True)))
        else:
            log.warning("the export worker wrote a line of more than %d MiB: stopping it", DONE_MAX >> 20)
        kill_tree(self.proc.pid)

    def _read(self) -> None:
        for line in self._lines():
            try:
                message = decode(line, Ready, Started, Done, *ENDS)
            except CodecError as e:
                forged = self._forged_end(line)
                if forged is None:
                    log.warning("the export worker said something that is not the protocol (%s): %r", e, line[:200])
                    continue
                message = forged
            if isinstance(message, ENDS):  # a spare's job's end
                message = Done(self.job or "", message)
            if isinstance(message, Done):  # a warm parent's child's End comes as written: decoded here, once
                message = ended(message)
            if isinstance(message, Ready):
                if self.ready is None:  # (a spare's job could say it again)
                    self._ready(message)
            elif isinstance(message, (Started, Done)):  # (all that decode lets through but Ready)
                if isinstance(message, Started):
                    del self._stderr[:]  # a spare's warm-up said that; what follows is the job's
                self.on_message(self, message)
        status = self.proc.wait()
        kill_group_left(self.proc.pid)  # what is left of it lets go of the pipes
        self._stderr_closed.wait(1.0)  # the stderr reader takes the last lines
        why = self._why_killed or (f"exit status {status}" if status >= 0 else f"killed by {signal_name(-status)}")
        stderr = tail(self._stderr.decode("utf-8", "replace"))
        self.on_message(self, Lost(why, stderr, startup=bool(self._why_killed), status=status))
        self._remove_scratch()  # after the message: a spare's crash report is read from there

    def _ready(self, ready: Ready) -> None:
        if ready.version != VERSION:  # an exportlens of another version in that environment
            self.kill(
                f"speaks worker protocol {ready.version}, not {VERSION}: install the same exportlens version there"
            )
            return
        self._torch_stamp = _stamp(ready.torch_file)
        self.ready = ready

    def _read_stderr(self) -> None:
        stderr = self.proc.stderr
        assert isinstance(stderr, io.BufferedReader)  # as stdout's
        for chunk in iter(lambda: stderr.read1(65536), b""):
            self._stderr += chunk
            if OUTPUT_ENDS in self._stderr and not self.output_ended.is_set():
                self.output = self._stderr.split(OUTPUT_ENDS, 1)[0].decode("utf-8", "replace")
                self.output_ended.set()
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL)]
        self._stderr_closed.set()

    def job_output(self, within: float) -> str:
        """A spare's job's output: what it printed on stderr before it said it ended."""
        self.output_ended.wait(within)
        return self.output

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
        kill_tree(self.proc.pid)

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


def _fault(warm: Warm) -> str:
    """A crashed spare's Python stack (faulthandler's report: ``spare.py``)."""
    try:
        return (Path(warm.scratch) / FAULT).read_text(errors="replace").strip()
    except OSError:
        return ""


class Spares:
    """Platforms without a safe fork: one pre-started, pre-warmed process per job."""

    def __init__(self, python: str, on_message: OnMessage) -> None:
        self.python = python
        self.on_message = on_message
        self.retired = False
        self._killed = False
        self._lock = threading.Lock()
        self._spare = self._start()
        self._busy: list[Warm] = []

    def _start(self) -> Warm:
        return Warm(self.python, self._message, "--spare")

    def _message(self, warm: Warm, message: Started | Done | Lost) -> None:
        # the job's code runs in the process that speaks for it, and can write where it does:
        # a spare says Started once, for its own job and pid, and ends that job alone
        if isinstance(message, (Started, Done)) and (warm.job is None or message.id != warm.job):
            return
        if isinstance(message, Started):
            if warm.started or warm.job is None:  # (no job: returned above)
                return
            warm.started, message = True, Started(warm.job, warm.proc.pid)
        if isinstance(message, Done):
            warm.job = None
            message = replace(message, output=warm.job_output(1.0))
        elif isinstance(message, Lost) and not message.startup:
            if warm.job is None:
                return  # a spare ends after its one job; its Done already came
            # it died running the job (a segfault, os._exit): that is the job's end
            status = message.status or 0
            died = Died(status=status if status >= 0 else None, signal=-status if status < 0 else None)
            output = warm.output if warm.output_ended.is_set() else message.stderr  # it ended, then failed to say how
            message = Done(warm.job, died, output=output, fault=_fault(warm))
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

    @property
    def pid(self) -> int:
        """The idle spare's: the process the next job goes to."""
        return self._spare.proc.pid

    def alive(self) -> bool:
        return not self._killed

    def stale(self, python: str) -> bool:
        return python != self.python

    def kill(self, why: str) -> None:
        # under the lock: a kill that lands while ``send`` starts the next spare must see that one
        with self._lock:
            self._killed = True
            doomed = [self._spare, *self._busy]
        for w in doomed:
            w.kill(why)

    def retire(self) -> None:
        self.retired = True
        threading.Thread(target=self.stop, daemon=True).start()

    def stop(self) -> None:
        with self._lock:
            stopping = [self._spare, *self._busy]
        for w in stopping:
            w.stop()
