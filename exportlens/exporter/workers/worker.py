"""The warm parent and its per-job children (torch side).

``python -m exportlens.exporter.workers.worker`` imports torch, runs one export of a
tiny built-in module so that torch's lazy imports and caches are warm, says
``ready``, and then gives every job a fresh child forked from itself, so that
nothing a user's module does (state, threads, a hang, a segfault,
``sys.exit``) outlives the job. CUDA is never touched here; a ``cuda`` job
initialises it in its own child.

A child forked from a big, warm process pays for copy-on-write page faults the
first time it touches torch's data (tens of milliseconds). So the parent keeps
a few *primed* children: forked ahead of time, each has run the built-in
export once (its own pages copied, no user code run) and waits for one job.
A job goes to a primed child when one is waiting, else to a fresh fork.

Protocol, JSON lines: requests on stdin, events on the original stdout (the
parent's own stdout is pointed at stderr, so a stray print cannot corrupt it).

    -> {"op": "run", "job": ID, "root": ..., "target": "path.py:Class", "options": {...},
        "memory_limit": BYTES, "sources": {"path.py": TEXT}, "plan": OWNER_PLAN | ""}
    <- {"event": "ready", "pid": ..., "torch": ..., "torch_file": ..., "python": ...}
    <- {"event": "started", "job": ID, "pid": PID}
    <- {"event": "done", "job": ID, "report": {...} | null, "exit": N | null, "signal": N | null,
        "output": TAIL, "fault": FAULTHANDLER_TEXT}

End of stdin (the owner is gone, even during warm-up) or ``{"op": "shutdown"}``
kills every child's process group and exits. With ``--spare`` the process runs
one job itself and exits: the owner keeps one such spare started, for
platforms where fork after importing torch is not safe.
"""

from __future__ import annotations

import base64
import ctypes
import faulthandler
import gc
import importlib.abc
import importlib.util
import json
import linecache
import os
import pickle
import resource
import select
import selectors
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT_TAIL = 64 * 1024  # bytes of the user's output kept per job
RESULT_MAX = 256 * 1024 * 1024
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Children are primed only after this long with no job running: priming is work a
# running job would wait behind, and in a burst of jobs (``exportlens check``) the
# next request comes at once, and a fresh fork costs it less than priming would.
PRIME_AFTER = 0.1

# The built-in module every warm-up runs: served from memory, never written to disk.
WARM_ROOT = Path("/nonexistent/exportlens-warm-up")
WARM_FILE = "_exportlens_warm_up.py"
WARM_SOURCE = """
import torch
from torch import nn


class Warm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return self.norm(h @ h.T @ h).sum(dim=-1)

    @staticmethod
    def example_inputs():
        return (torch.randn(3, 4),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: torch.export.Dim("n")}}
"""


def warm_up() -> None:
    """One whole job on the built-in module: torch, libcst, exportlens, all warmed."""
    import torch  # noqa: F401 - first: what an interpreter given by mistake most often lacks

    report = run_job({"root": str(WARM_ROOT), "target": f"{WARM_FILE}:Warm", "sources": {WARM_FILE: WARM_SOURCE}})
    if report["status"] != "exported":  # a broken environment: say so in the worker's stderr
        print(f"exportlens worker: the warm-up export failed: {report['findings']}", file=sys.stderr)
    # leave nothing of it for a user's job to see
    sys.modules.pop(WARM_FILE[:-3], None)
    if str(WARM_ROOT) in sys.path:
        sys.path.remove(str(WARM_ROOT))
    gc.collect()


def run_job(request: dict[str, Any]) -> dict[str, Any]:
    """One module, in this process: plan it statically, export it, return the report."""
    from ..core.report import to_dict
    from ..runtime.check import check_one
    from ..runtime.run import Options
    from ..static.plan import make_plan

    root = Path(request["root"]).resolve()
    path, _, _ = request["target"].rpartition(":")
    sources = {root / rel: text for rel, text in (request.get("sources") or {}).items()}
    with overlay(sources):
        plan = _owner_plan(request, root) or make_plan([root / path], root=root, sources=sources)
        plan.sources = sources
        planned = next((p for p in plan.modules if p.target == request["target"]), None)
        if planned is None:
            raise LookupError(f"{request['target']} is no longer an nn.Module in {path}")
        opts = dict(request.get("options") or {})
        if opts.get("artifact"):
            opts["artifact"] = Path(opts["artifact"])
        return to_dict(check_one(plan, planned, Options(**opts)))


def _owner_plan(request: dict[str, Any], root: Path) -> Any:
    """The plan the owner sent, if it was made from the texts this job will import."""
    if not request.get("plan"):
        return None
    from ..static.deps import digest

    try:
        packed = pickle.loads(base64.b64decode(request["plan"]))
    except Exception:
        return None
    sources = request.get("sources") or {}
    if any(digest(root, path, sources) != hashed for path, hashed in packed["texts"].items()):
        return None
    return packed["plan"]


# -- unsaved buffers: imported from memory -----------------------------------------


class _Loader(importlib.abc.SourceLoader):
    """Source from memory, with the real path as ``__file__`` (tracebacks and torch's
    stack traces then name the user's file and lines). No bytecode is read or written."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self.text.encode("utf-8")
        with open(path, "rb") as f:
            return f.read()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the overridden files the way the path finder would find them on disk:
    in the same folders, packages before modules."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.names = {Path(p).parent.name if Path(p).name == "__init__.py" else Path(p).stem for p in files}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        name = fullname.rpartition(".")[2]
        if name not in self.names:  # the common case: not ours, costs one set lookup
            return None
        for folder in path if path is not None else sys.path:
            folder = os.path.abspath(folder or os.curdir)
            for candidate, package in ((os.path.join(folder, name, "__init__.py"), True), (os.path.join(folder, name + ".py"), False)):
                if candidate in self.files:
                    locations = [os.path.dirname(candidate)] if package else None
                    loader = _Loader(candidate, self.files[candidate])
                    return importlib.util.spec_from_file_location(fullname, candidate, loader=loader, submodule_search_locations=locations)
                if os.path.isfile(candidate):
                    return None  # on disk, earlier in the path: the normal import finds it
        return None


@contextmanager
def overlay(sources: dict[Path, str]) -> Iterator[None]:
    """Import ``sources`` (absolute path -> text) from memory instead of the disk."""
    if not sources:
        yield
        return
    files = {str(p): text for p, text in sources.items()}
    finder = _Finder(files)
    sys.meta_path.insert(0, finder)
    for path, text in files.items():  # what tracebacks, inspect and torch's stack traces show
        lines = text.splitlines(keepends=True)
        linecache.cache[path] = (len(text), None, lines, path)  # mtime None: never re-read from disk
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for path in files:
            linecache.cache.pop(path, None)


# -- the child's side ----------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when its parent dies (the parent is single-threaded,
    so "the thread that forked us" is the parent)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the prctl took effect
        os._exit(1)


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
    except BaseException:
        return {"internal": traceback.format_exc()[-4000:]}


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _run_in_child(request: dict[str, Any], res: int) -> int:
    """The job, in this (forked) process: its result as one JSON line on ``res``."""
    from ..runtime import run

    _limit_memory(request.get("memory_limit"))
    run.FRESH_PROCESS = True
    result = _child_result(request)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # the user's output is in the pipe before the result says "done"
        except (OSError, ValueError):
            pass
    _write_all(res, json.dumps(result).encode() + b"\n")
    return result["exited"] if isinstance(result.get("exited"), int) else 0


@dataclass
class _Child:
    pid: int
    out: int  # read end of the child's stdout and stderr
    res: int  # read end of its result (and of faulthandler's report)
    req: int | None = None  # write end of a primed child's request pipe
    job: str | None = None  # None while priming or primed
    primed: bool = False
    output: bytearray = field(default_factory=bytearray)
    result: bytearray = field(default_factory=bytearray)
    parsed: tuple[dict[str, Any] | None, str] | None = None  # the result line, once complete

    @property
    def fds(self) -> list[int]:
        return [fd for fd in (self.out, self.res, self.req) if fd is not None]


class Parent:
    def __init__(self, primed: int = 0) -> None:
        self.proto = os.dup(1)
        os.dup2(2, 1)  # our own prints (and torch's) go to stderr, never into the protocol
        self.sel = selectors.DefaultSelector()
        self.children: dict[int, _Child] = {}
        self.want_primed = primed
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.shutdown())
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # what a job's processes leave behind comes back to us
        self.sel.register(0, selectors.EVENT_READ, "stdin")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.inbox = b""
        gc.freeze()  # keep the collector off the inherited heap: fewer pages copied per child

    def send(self, message: dict[str, Any]) -> None:
        try:
            _write_all(self.proto, (json.dumps(message) + "\n").encode())
        except OSError:  # the owner is gone
            self.shutdown()

    def serve(self) -> None:
        while True:
            running = sum(1 for c in self.children.values() if c.job is not None)
            short = not running and len(self.children) < self.want_primed
            events = self.sel.select(PRIME_AFTER if short else None)
            if not events and short:
                self.top_up()
            for key, _ in events:
                if key.data == "stdin":
                    chunk = os.read(0, 1 << 20)
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

    # -- children

    def fork(self, request: dict[str, Any] | None) -> _Child:
        """A child that runs ``request``, or (None) a primed one that waits for its job."""
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe()
        req_r, req_w = os.pipe() if request is None else (None, None)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                os.setsid()  # its own process group: one killpg ends it and anything it forks
                _die_with_parent(parent)
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                for fd in [out_r, res_r, req_w, self.wake_r, self.wake_w, self.proto] + [f for c in self.children.values() for f in c.fds]:
                    if fd is not None:
                        os.close(fd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                for stream in (sys.stdout, sys.stderr):
                    stream.reconfigure(line_buffering=True, write_through=True)
                faulthandler.enable(os.fdopen(os.dup(res_w), "w"))  # a segfault's Python stack, beside the result
                if request is None:
                    warm_up()
                    gc.freeze()
                    _write_all(res_w, b'{"primed": true}\n')
                    request = _read_request(req_r)
                code = _run_in_child(request, res_w)
            except BaseException:
                pass
            finally:
                os._exit(code)
        for fd in (out_w, res_w, req_r):
            if fd is not None:
                os.close(fd)
        child = _Child(pid, out_r, res_r, req_w)
        self.children[pid] = child
        for fd, kind in ((out_r, "out"), (res_r, "res")):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, (pid, kind))
        return child

    def start(self, request: dict[str, Any]) -> None:
        child = next((c for c in self.children.values() if c.primed and c.job is None), None)
        if child is not None:
            assert child.req is not None
            child.output.clear()  # anything the warm-up printed is not the user's
            try:
                _write_all(child.req, json.dumps(request).encode() + b"\n")
            except OSError:  # it died waiting; reaping it is for later
                child = None
            else:
                os.close(child.req)
                child.req = None
        if child is None:
            child = self.fork(request)
        child.job = request["job"]
        self.send({"event": "started", "job": child.job, "pid": child.pid})

    def top_up(self) -> None:
        """Keep ``want_primed`` children primed or priming, ready for the next jobs."""
        waiting = sum(1 for c in self.children.values() if c.job is None)
        for _ in range(self.want_primed - waiting):
            self.fork(None)

    def pump(self, pid: int, kind: str) -> bool:
        """Read what a child wrote; False at end of file."""
        child = self.children.get(pid)
        if child is None:
            return False
        fd = child.out if kind == "out" else child.res
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            self._close(fd)
            return False
        if kind == "out":
            child.output += chunk
            del child.output[: max(0, len(child.output) - OUTPUT_TAIL)]
            return True
        if len(child.result) < RESULT_MAX:
            child.result += chunk
        if child.result.endswith(b"\n"):
            self._result_line(child)
        return True

    def _result_line(self, child: _Child) -> None:
        if not child.primed and child.job is None and child.result.startswith(b'{"primed"'):
            child.primed = True
            child.result.clear()
            return
        if child.job is not None:
            child.parsed = _parse_result(child.result)
            if child.parsed[0] is not None:
                # the result is in: no need to wait for the process to exit (or for what it forked)
                self.finish(child, None)

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

    def finish(self, child: _Child, status: int | None) -> None:
        """The job is over: its result is in (``status`` None) or its process has exited."""
        _killpg(child.pid)  # whatever it forked goes with it, and lets go of the pipes
        self.kill_orphans()
        for fd, kind in ((child.res, "res"), (child.out, "out")):
            # after the killpg nothing holds the write ends: end of file comes at once
            while _readable(fd, 1.0 if status is not None else 0.0) and self.pump(child.pid, kind):
                pass
            self._close(fd)
        if child.req is not None:
            os.close(child.req)
        del self.children[child.pid]
        if child.job is None:  # a primed child died waiting (it never should): the next idle moment replaces it
            return
        result, fault = child.parsed if status is None and child.parsed else _parse_result(child.result)
        message: dict[str, Any] = {"event": "done", "job": child.job, "output": child.output.decode("utf-8", "replace"), "fault": fault}
        message["exit"] = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
        message["signal"] = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
        if result is None and child.result and not fault:
            message["internal"] = "the export process wrote a truncated result"
        message.update(result or {})
        self.send(message)

    def kill_orphans(self) -> None:
        """Processes a job left behind in a session of their own were re-parented to us
        (we are a subreaper): anything of ours that is not a known child goes."""
        for pid in _children(os.getpid()) - set(self.children):
            _killpg(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def shutdown(self) -> None:
        for pid in set(self.children) | _children(os.getpid()):
            _killpg(pid)
        os._exit(0)


def _read_request(fd: int) -> dict[str, Any]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 20)
        if not chunk:  # the parent closed the pipe without a job: nothing to do
            os._exit(0)
        data += chunk
    os.close(fd)
    return json.loads(data)


def _parse_result(data: bytes) -> tuple[dict[str, Any] | None, str]:
    """The result line, and whatever else the child wrote there (faulthandler's report)."""
    result, other = None, []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("{"):
            try:
                result = json.loads(line)
                continue
            except ValueError:
                pass
        other.append(line)
    return result, "\n".join(other).strip()


def _children(pid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return {int(p) for p in f.read().split()}
    except OSError:
        return set()


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


# -- starting up ---------------------------------------------------------------------


@contextmanager
def _exit_if_owner_goes() -> Iterator[None]:
    """While warming up we read no requests, so watch stdin for its writer going away:
    an owner killed during our start must not leave us running."""
    stop_r, stop_w = os.pipe()

    def watch() -> None:
        poll = select.poll()
        poll.register(0, select.POLLHUP)
        poll.register(stop_r, select.POLLIN)
        while True:
            for fd, events in poll.poll():
                if fd == stop_r:
                    return
                if events & (select.POLLHUP | select.POLLERR):
                    os._exit(0)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        os.write(stop_w, b"x")
        watcher.join()  # no thread of ours may live on into a fork
        os.close(stop_r)
        os.close(stop_w)


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
    with _exit_if_owner_goes():
        warm_up()
    if "--spare" in sys.argv:
        spare()
        return
    primed = int(sys.argv[sys.argv.index("--primed") + 1]) if "--primed" in sys.argv else 0
    parent = Parent(primed)
    parent.send(_ready())
    parent.serve()


if __name__ == "__main__":
    main()
