"""The warm parent and its per-job children (torch side).

``python -m exportlens.exporter.workers.worker`` imports torch, runs one export of a tiny built-in
module so that torch's lazy imports and caches are warm, says ``ready``, and then gives every job a
fresh child forked from itself, so that nothing a user's module does (state, threads, a hang, a
segfault, ``sys.exit``) outlives the job. CUDA is never touched here; a ``cuda`` job initialises it
in its own child.

A child forked from a big, warm process pays for copy-on-write page faults the first time it
touches torch's data (tens of milliseconds). So the parent keeps a few *primed* children: forked
ahead of time, each has run the built-in export once (its own pages copied, no user code run) and
waits for one job. A job goes to a primed child when one is waiting, else to a fresh fork.

The protocol (``protocol.py``): requests (Run, Shutdown) on stdin, one JSON line each; Ready,
Started and Done on the original stdout (the parent's own stdout is pointed at stderr, so a stray
print cannot corrupt it). A job's child writes its End on a pipe of its own, beside faulthandler's
report of a crash.

A job's end kills its whole process tree: what it forked, in its process group or in a session of
its own. The parent is a subreaper: a process orphaned inside a job comes back to it, and is
killed, as is anything it did not fork itself. End of stdin (the owner is gone, even during
warm-up) or Shutdown kills every process below this one and exits. With ``--spare`` the process
runs one job itself and exits: the owner keeps one such spare started, for platforms where fork
after importing torch is not safe.
"""

from __future__ import annotations

import gc
import os
import selectors
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch  # before our own imports: what an interpreter given by mistake most often lacks

from ..core.options import Task
from . import scratch, spare
from .child import PRIMED, forked, warm_imports, warm_up, write_all
from .forked_child import OUTPUT_TAIL, Child
from .platform import (
    adopt_orphans,
    children,
    exit_if_owner_goes,
    kill,
    kill_tree,
    killpg,
    readable,
    reap_all,
    tree,
    tree_private_bytes,
    write_within,
)
from .preload import preload
from .protocol import (
    DONE_MAX,
    CodecError,
    Died,
    Done,
    Encoded,
    Ready,
    Run,
    Shutdown,
    Started,
    decode,
    encode,
)

# Children are primed only after this long with no job running: priming is work a running job would wait
# behind, and in a burst of jobs (``exportlens check``) the next request comes at once: a fork costs it less.
PRIME_AFTER = 0.1
MEMORY_EVERY = 0.2  # seconds between checks of a running job's memory and of orphans
SHUTDOWN_WAIT = 2.0  # seconds to see everything below us gone before exiting anyway
DRAIN_WAIT = 1.0  # seconds to read what a finished job left in its pipes: its killed tree let go of them
HAND_OVER_WAIT = 1.0  # seconds for a primed child to take its request, else a fresh fork runs the job


class Parent:
    def __init__(self, primed: int, warmed: bool = True) -> None:
        self.warmed = warmed  # else it warms up once its first job's child is running
        self.proto = os.dup(1)
        os.dup2(2, 1)  # our own prints (and torch's) go to stderr, never into the protocol
        # poll(), not epoll: a forked job shares an epoll instance, and one that registered a pipe of
        # its own there under our stdin's number had us block reading stdin. poll() keeps no such state
        self.sel = selectors.PollSelector()
        self.children: dict[int, Child] = {}
        self.want_primed = primed
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.shutdown())
        adopt_orphans()  # what a job's processes leave behind comes back to us
        os.set_blocking(0, False)  # and a read of stdin never waits, whatever woke us
        self.sel.register(0, selectors.EVENT_READ, "stdin")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.inbox = b""
        self.enforced = 0.0
        gc.freeze()  # keep the collector off the inherited heap: fewer pages copied per child

    def send(self, message: Ready | Started | Done) -> None:
        line = encode(message)
        if len(line) > DONE_MAX and isinstance(message, Done):  # an End escaped once more: past what the owner reads
            line = encode(replace(message, end=Died(overlong=True)))
        try:
            write_all(self.proto, line)
        except OSError:  # the owner is gone
            self.shutdown()

    def serve(self) -> None:
        while True:
            running = sum(1 for c in self.children.values() if c.job is not None)
            short = not running and len(self.children) < self.want_primed
            events = self.sel.select(PRIME_AFTER if short else MEMORY_EVERY if running else None)
            if not events and short:
                self.top_up()
            if running:
                self.enforce_limits()
            for key, _ in events:
                if key.data == "stdin":
                    self.requests()
                elif key.data == "wake":
                    try:
                        os.read(self.wake_r, 512)
                    except BlockingIOError:
                        pass
                    self.reap()
                else:
                    self.pump(*key.data)

    def requests(self) -> None:
        try:
            chunk = os.read(0, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            self.shutdown()
        self.inbox += chunk
        while b"\n" in self.inbox:
            line, self.inbox = self.inbox.split(b"\n", 1)
            if line.strip():
                self.handle(line)

    def handle(self, line: bytes) -> None:
        try:
            request = decode(line, Run, Shutdown)
        except CodecError as e:  # an owner of another version: it hears of it as a lost worker
            print(f"exportlens worker: not a request ({e}): {line[:200]!r}", file=sys.stderr)
            self.shutdown()
            return
        if isinstance(request, Shutdown):
            self.shutdown()
            return
        self.start(request, line + b"\n")

    # -- children

    def fork(self, request: Run | None) -> Child:
        """A child that runs ``request``, or (None) a primed one that waits for its job."""
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe()
        req_r, req_w = os.pipe() if request is None else (None, None)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            inherited = [out_r, res_r, req_w, self.wake_r, self.wake_w, self.proto] + [
                f for c in self.children.values() for f in (c.out, c.res, c.req)
            ]
            forked(parent, request, inherited, out_w, res_w, req_r)
        for fd in (out_w, res_w, req_r):
            if fd is not None:
                os.close(fd)
        child = Child(pid, out_r, res_r, req_w)
        self.children[pid] = child
        for fd, kind in ((out_r, "out"), (res_r, "res")):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, (pid, kind))
        return child

    def start(self, request: Run, line: bytes) -> None:
        if preload(request.job.preload, request.job.root):
            self.retire_primed()  # forked before the new import: the next job's child should have it
        # a primed child is kept for a verdict, which the user waits for: the work after it (the serving
        # run, proofs, lowering) takes a fresh fork, and the next idle moment primes one child, not two
        primed = (c for c in self.children.values() if c.primed and c.job is None and not c.retired)
        child = next(primed, None) if request.job.task is Task.VERDICT else None
        if child is not None:
            assert child.req is not None
            child.output.clear()  # anything the warm-up printed is not the user's
            taken = write_within(child.req, line, HAND_OVER_WAIT)  # as the owner wrote it: not encoded again
            os.close(child.req)
            child.req = None
            if not taken:  # it died or stalls waiting: it goes, reaped later, and a fresh fork runs the job
                child.retired = True
                killpg(child.pid)
                child = None
        if child is None:
            child = self.fork(request)
        child.job = request.id
        child.memory_limit = request.job.memory_limit
        self.send(Started(request.id, child.pid))
        if not self.warmed:  # beside the first job, on the other core: the children forked after it start warm
            self.warmed = True
            try:
                warm_up()
            except Exception as e:  # a broken environment: the job beside it meets it too, and says so
                print(f"exportlens worker: the warm-up export failed: {type(e).__name__}: {e}", file=sys.stderr)
            gc.freeze()

    def retire_primed(self) -> None:
        """Stop the children waiting for a job (an idle moment primes new ones)."""
        for child in list(self.children.values()):
            if child.job is None:
                child.retired = True  # until it is reaped it is still a child: not one to give a job to
                killpg(child.pid)

    def enforce_limits(self) -> None:
        """While jobs run: kill what a job orphaned (a process that left its tree by
        outliving its parent would escape the memory total), and hold each job's whole
        tree to its memory limit. RLIMIT_AS caps each process, but a module that forks
        would get the limit once per process."""
        if time.monotonic() - self.enforced < MEMORY_EVERY:
            return  # a job that floods its output wakes the loop far more often
        self.enforced = time.monotonic()
        self.kill_orphans()
        for child in list(self.children.values()):
            if child.job is not None and child.memory_limit and not child.over_limit:
                if tree_private_bytes(child.pid) > child.memory_limit:
                    child.over_limit = True
                    kill_tree(child.pid)

    def top_up(self) -> None:
        """Keep ``want_primed`` children primed or priming, ready for the next jobs."""
        waiting = sum(1 for c in self.children.values() if c.job is None and not c.retired)
        for _ in range(self.want_primed - waiting):
            self.fork(None)

    def pump(self, pid: int, kind: str) -> bool:
        """Read what a child wrote; False at end of file."""
        child = self.children.get(pid)
        if child is None:
            return False
        fd = child.out if kind == "out" else child.res
        if fd is None:
            return False
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            # closed now, and forgotten: the number is free for the next pipe, which a stale
            # copy here would close again (another child's) or hand a new child to close (its own)
            self._close(fd)
            setattr(child, kind, None)
            return False
        if kind == "out":
            child.output += chunk
            del child.output[: max(0, len(child.output) - OUTPUT_TAIL)]
            return True
        for line in child.result.feed(chunk):
            if self._result_line(child, line):
                return False  # its End is in: the job is over, its pipes closed
        if child.result.overlong and child.job is not None:
            self.finish(child, None)  # a line past RESULT_MAX is no End: the job is stopped, and told so
            return False
        return True

    def _result_line(self, child: Child, line: bytes) -> bool:
        """One whole line of the child's result pipe; True once it was the job's End (the job is over)."""
        if not child.primed and child.job is None and line + b"\n" == PRIMED:
            child.primed = True
            return False
        found = Encoded.of(line.decode("utf-8", "replace")) if child.job is not None else None
        if found is None:  # faulthandler's report, or anything else the job wrote there
            child.other += line + b"\n"
            del child.other[: max(0, len(child.other) - OUTPUT_TAIL)]
            return False
        child.end = found
        self.finish(child, None)  # the result is in: no need to wait for the process to exit (or for what it forked)
        return True

    def _close(self, fd: int) -> None:
        try:
            self.sel.unregister(fd)
        except (KeyError, ValueError):
            pass
        try:
            os.close(fd)
        except OSError:
            pass

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            child = self.children.get(pid)  # else an orphan that came back to us, or a finished job
            if child is not None:
                self.finish(child, status)
        # a job's process that left its process group is re-parented to us when the job's
        # process exits, just before we hear of that exit
        self.kill_orphans()

    def finish(self, child: Child, status: int | None) -> None:
        """The job is over: its result is in (``status`` None) or its process has exited."""
        kill_tree(child.pid)  # whatever it forked goes with it
        self._drain(child, waits=status is not None)
        if self.children.get(child.pid) is not child:
            return  # its result line, read just now, finished it already
        if child.req is not None:
            os.close(child.req)
        del self.children[child.pid]
        if child.job is not None:  # (else a primed child died waiting: the next idle moment replaces it)
            self.send(child.done(status))  # before the clean-up below: the owner waits for it
        self.kill_orphans()  # after the owner has its verdict: what is left of the job is killed already
        scratch.remove(child.pid)

    def _drain(self, child: Child, waits: bool) -> None:
        """What is left in the child's pipes, read, then closed. After its End, what is there now (it wrote
        its output first; the end of file waits for the killed copy of torch's process to be torn down); a
        crash's report: till the end of file. A deadline all the same: what outlived the kill may write on."""
        until = time.monotonic() + (DRAIN_WAIT if waits else DRAIN_WAIT / 20)
        for kind in ("res", "out"):
            while (fd := getattr(child, kind)) is not None and readable(fd, max(0.0, until - time.monotonic()) * waits):
                if not self.pump(child.pid, kind) or time.monotonic() > until:
                    break
            if (fd := getattr(child, kind)) is not None:
                self._close(fd)
                setattr(child, kind, None)

    def kill_orphans(self) -> None:
        """Processes a job left behind were re-parented to us (we are a subreaper) when
        their parent died: anything of ours that is not a known child goes, with its tree."""
        for pid in children(os.getpid()) - set(self.children):
            kill_tree(pid)

    def shutdown(self) -> None:
        """Everything below us goes before we do, ``setsid`` or not. What loses its parent
        meanwhile is re-parented to us, and goes in the next round."""
        me = os.getpid()
        deadline = time.monotonic() + SHUTDOWN_WAIT
        while (below := tree(me) - {me}) and time.monotonic() < deadline:
            for pid in below:
                killpg(pid)
                kill(pid)
            reap_all()
            time.sleep(0.005)
        scratch.remove_all()  # nothing below us writes there any more; the owner may be gone
        os._exit(0)


# -- starting up ---------------------------------------------------------------------


def main() -> None:
    base = Path(sys.argv[sys.argv.index("--scratch") + 1])
    scratch.start(base)
    with exit_if_owner_goes(then=scratch.remove_all):  # an owner gone before we are warm leaves no folder
        warm_imports()
        # a job already asked for (a cold start's first) is not kept waiting for the warm-up export:
        # its child pays the first export's costs once, as the warm-up would have, and the warm-up follows
        warmed = not readable(0, 0.0)
        if warmed:
            warm_up()
    if "--spare" in sys.argv:
        spare.serve(Ready(os.getpid(), torch.__version__, torch.__file__, sys.executable), base)
        return
    primed = int(sys.argv[sys.argv.index("--primed") + 1]) if "--primed" in sys.argv else 0
    parent = Parent(primed, warmed)
    parent.send(Ready(os.getpid(), torch.__version__, torch.__file__, sys.executable))
    parent.serve()


if __name__ == "__main__":
    main()
