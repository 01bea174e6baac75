"""The warm parent and its per-job children (torch side).

``python -m exportlens.exporter.worker`` imports torch, exports a tiny module
once so that torch's lazy imports and caches are warm, says ``ready``, and then
forks a fresh child for every job, so that nothing a user's module does (state,
threads, a hang, a segfault, ``sys.exit``) outlives it. CUDA is never touched
here; a ``cuda`` job initialises it in its own child.

Protocol, JSON lines: requests on stdin, events on the original stdout (the
parent's own stdout is pointed at stderr, so a stray print cannot corrupt it).

    -> {"op": "run", "job": ID, "root": ..., "target": "path.py:Class", "options": {...}, "memory_limit": BYTES}
    <- {"event": "ready", "pid": ..., "torch": ..., "torch_file": ..., "python": ...}
    <- {"event": "started", "job": ID, "pid": PID}
    <- {"event": "done", "job": ID, "report": {...} | null, "exit": N | null, "signal": N | null, "output": TAIL}

End of stdin (the owner is gone) or ``{"op": "shutdown"}`` kills every child's
process group and exits. With ``--spare`` the process runs one job itself and
exits: the owner keeps one such spare started, for platforms where fork after
importing torch is not safe.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import selectors
import signal
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT_TAIL = 64 * 1024  # bytes of the user's output kept per job
RESULT_MAX = 256 * 1024 * 1024
PR_SET_PDEATHSIG = 1


def warm_up() -> None:
    import torch
    from torch.export import Dim

    from .run import quiet

    class Warm(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.relu(x @ x.T).sum(dim=1)

    with quiet():
        torch.export.export(Warm(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim("n")}})
    # what every job imports anyway
    from . import check, explain, fixes, plan, summary  # noqa: F401


def run_job(request: dict[str, Any]) -> dict[str, Any]:
    """One module, in this process: plan it statically, export it, return the report."""
    from .check import check_one
    from .plan import make_plan
    from .report import to_dict
    from .run import Options

    root = Path(request["root"])
    path, _, _ = request["target"].rpartition(":")
    plan = make_plan([root / path], root=root)
    planned = next((p for p in plan.modules if p.target == request["target"]), None)
    if planned is None:
        raise LookupError(f"{request['target']} is no longer an nn.Module in {path}")
    opts = dict(request.get("options") or {})
    if opts.get("artifact"):
        opts["artifact"] = Path(opts["artifact"])
    return to_dict(check_one(plan, planned, Options(**opts)))


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (the parent is single-threaded)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _limit_memory(limit: int | None) -> None:
    """Cap the address space at what the process maps now plus ``limit``."""
    if not limit:
        return
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        mapped = 0
    cap = mapped + limit
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _child_result(request: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"report": run_job(request)}
    except SystemExit as e:  # sys.exit() in the user's code
        return {"exited": e.code if isinstance(e.code, int) else 1, "message": f"called sys.exit({e.code!r})"}
    except MemoryError:
        return {"memory": True}
    except BaseException:  # noqa: BLE001 - an exporter bug still gives the owner a message
        return {"internal": traceback.format_exc()[-4000:]}


@dataclass
class _Job:
    id: str
    pid: int
    out: int  # read end of the user's output
    res: int  # read end of the result
    output: bytearray = field(default_factory=bytearray)
    result: bytearray = field(default_factory=bytearray)
    status: int | None = None


class Parent:
    def __init__(self) -> None:
        self.proto = os.dup(1)
        os.dup2(2, 1)  # our own prints (and torch's) go to stderr, never into the protocol
        self.sel = selectors.DefaultSelector()
        self.jobs: dict[int, _Job] = {}
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.shutdown())
        self.sel.register(0, selectors.EVENT_READ, "stdin")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.inbox = b""

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.proto, data) :]

    def serve(self) -> None:
        while True:
            for key, _ in self.sel.select():
                if key.data == "stdin":
                    chunk = os.read(0, 65536)
                    if not chunk:
                        self.shutdown()
                    self.inbox += chunk
                    while b"\n" in self.inbox:
                        line, self.inbox = self.inbox.split(b"\n", 1)
                        if line.strip():
                            self.handle(json.loads(line))
                elif key.data == "wake":
                    try:
                        os.read(self.wake_r, 512)
                    except BlockingIOError:
                        pass
                    self.reap()
                else:
                    self.pump(*key.data)

    def handle(self, request: dict[str, Any]) -> None:
        if request.get("op") == "shutdown":
            self.shutdown()
        elif request.get("op") == "run":
            self.start(request)

    def start(self, request: dict[str, Any]) -> None:
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 0
            try:
                os.setsid()  # its own process group: one killpg ends it and anything it forks
                _die_with_parent()
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                for fd in (out_r, res_r, self.wake_r, self.wake_w, self.proto):
                    os.close(fd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                _limit_memory(request.get("memory_limit"))
                result = _child_result(request)
                data = json.dumps(result).encode()
                while data:
                    data = data[os.write(res_w, data) :]
                code = result.get("exited", 0) if isinstance(result.get("exited"), int) else 0
            except BaseException:  # noqa: BLE001
                code = 70
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        os.close(out_w)
        os.close(res_w)
        job = _Job(request["job"], pid, out_r, res_r)
        self.jobs[pid] = job
        for fd, kind in ((out_r, "out"), (res_r, "res")):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, (pid, kind))
        self.send({"event": "started", "job": job.id, "pid": pid})

    def pump(self, pid: int, kind: str) -> bool:
        """Read what a child wrote; False at end of file."""
        job = self.jobs.get(pid)
        if job is None:
            return False
        fd = job.out if kind == "out" else job.res
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            self._close(fd)
            return False
        if kind == "out":
            job.output += chunk
            del job.output[: max(0, len(job.output) - OUTPUT_TAIL)]
        elif len(job.result) < RESULT_MAX:
            job.result += chunk
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
                return
            if pid == 0:
                return
            job = self.jobs.pop(pid, None)
            if job is not None:
                self.finish(job, status)

    def finish(self, job: _Job, status: int) -> None:
        _killpg(job.pid)  # whatever it forked goes with it, and lets go of the pipes
        self.jobs[job.pid] = job  # pump() finds the job by pid
        for fd, kind in ((job.res, "res"), (job.out, "out")):
            while _readable(fd, 1.0) and self.pump(job.pid, kind):
                pass
            self._close(fd)
        del self.jobs[job.pid]
        message: dict[str, Any] = {"event": "done", "job": job.id, "output": job.output.decode("utf-8", "replace")}
        message["exit"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        message["signal"] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        try:
            message.update(json.loads(job.result) if job.result else {})
        except ValueError:
            message["internal"] = "the export process wrote a truncated result"
        self.send(message)

    def shutdown(self) -> None:
        for pid in list(self.jobs):
            _killpg(pid)
        os._exit(0)


def _readable(fd: int, timeout: float) -> bool:
    sel = selectors.DefaultSelector()
    try:
        sel.register(fd, selectors.EVENT_READ)
        return bool(sel.select(timeout))
    except (ValueError, OSError):
        return False
    finally:
        sel.close()


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def spare() -> None:
    """Run exactly one job in this process (platforms without a safe fork)."""
    proto = os.dup(1)
    os.dup2(2, 1)
    with os.fdopen(proto, "w", buffering=1) as out:
        out.write(json.dumps(_ready()) + "\n")
        line = sys.stdin.readline()
        if not line:
            return
        request = json.loads(line)
        _limit_memory(request.get("memory_limit"))
        out.write(json.dumps({"event": "started", "job": request["job"], "pid": os.getpid()}) + "\n")
        result = _child_result(request)
        out.write(json.dumps({"event": "done", "job": request["job"], "exit": 0, "signal": None, "output": "", **result}) + "\n")


def _ready() -> dict[str, Any]:
    import torch

    return {"event": "ready", "pid": os.getpid(), "torch": torch.__version__, "torch_file": torch.__file__, "python": sys.executable}


def main() -> None:
    warm_up()
    if "--spare" in sys.argv:
        spare()
        return
    parent = Parent()
    parent.send(_ready())
    parent.serve()


if __name__ == "__main__":
    main()
