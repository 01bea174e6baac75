"""A spare: one job in a process started (and warmed) ahead of it, where fork after
importing torch is not safe (macOS, Windows; ``EXPORTLENS_NO_FORK=1`` anywhere). It does
for itself what the warm parent and a forked child share on Linux: preload the job's
packages, confine it (``child.enter``), hold its process tree to the memory limit, keep
a crash's Python stack for the owner, and kill what it started before it exits. What the
job prints goes to its stderr, which the owner reads (up to ``OUTPUT_ENDS``); the owner
(``processes.Spares``) kills its tree on a timeout or a cancel."""

from __future__ import annotations

import faulthandler
import io
import os
import sys
import threading
from pathlib import Path

from . import scratch
from .child import child_end, enter, report_end, write_all
from .platform import adopt_orphans, children, kill_tree, tree_private_bytes, watch_owner
from .preload import preload
from .protocol import FAULT, OUTPUT_ENDS, End, OutOfMemory, Ready, Run, Started, decode, encode

MEMORY_EVERY = 0.2  # seconds between checks of the job's memory


def serve(ready: Ready, base: Path) -> None:
    """Say ready, read the one request, run it here, say how it ended."""
    proto = os.dup(1)
    os.dup2(2, 1)  # a stray print cannot corrupt the protocol
    adopt_orphans()  # what the job's processes orphan stays below us, and goes with us
    try:
        write_all(proto, encode(ready))
        line = sys.stdin.buffer.readline()
    except OSError:  # the owner went as we said ready (a broken pipe): its folder for us goes with us
        line = b""
    if not line:  # the owner is gone (or stopped us) before our job: its folder for us goes with us
        scratch.remove_all()
        return
    run = decode(line, Run)
    preload(run.job.preload, run.job.root)  # unconfined, as the warm parent does before it forks
    write_all(proto, encode(Started(run.id, os.getpid())))
    faulthandler.enable(open(base / FAULT, "w"))  # open for the life of the process; the owner reads it after a crash
    cleaner = scratch.remove_if_orphaned()  # unconfined, so that it can
    enter(run.job)  # before any thread of ours starts: each inherits the sandbox
    job = Job(proto, run, cleaner)
    job.watch()
    job.done(child_end(run.job))


class Job:
    """The running job's memory and end, watched from threads started once it is confined.
    What it prints goes to the owner's pipe as it is written (a crash loses none of it)."""

    def __init__(self, proto: int, run: Run, cleaner: int | None) -> None:
        self.proto, self.run, self.cleaner = proto, run, cleaner
        self.lock = threading.Lock()
        self.stop = threading.Event()
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, io.TextIOWrapper):  # (as it is, unless something replaced it)
                stream.reconfigure(line_buffering=True, write_through=True)

    def watch(self) -> None:
        threading.Thread(target=watch_owner, args=(self.stop, self._kill_below), daemon=True).start()
        if self.run.job.memory_limit:
            threading.Thread(target=self._hold_memory, args=(tree_private_bytes(os.getpid()),), daemon=True).start()

    def _hold_memory(self, before: int) -> None:
        """The job's whole tree, ``setsid`` or not, holds at most the limit beyond what this
        process held before the job (torch's own pages are private to it, unlike a fork's)."""
        limit = self.run.job.memory_limit or 0
        while not self.stop.wait(MEMORY_EVERY):
            if tree_private_bytes(os.getpid()) - before > limit:
                self._kill_below()
                self.done(OutOfMemory())

    def _kill_below(self) -> None:
        for pid in children(os.getpid()) - {self.cleaner}:
            kill_tree(pid)

    def done(self, end: End) -> None:
        """Say how the job ended (once: the memory watch and the job may both get here) and exit."""
        with self.lock:
            self.stop.set()
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            self._kill_below()
            try:
                write_all(2, OUTPUT_ENDS)
            except OSError:
                pass
            report_end(self.proto, end)  # as a forked child's, bare: its owner knows the job it is for
            os._exit(0)
