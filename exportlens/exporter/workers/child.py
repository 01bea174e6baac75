"""A job, in the process that runs it (torch side): plan the module (or take the
owner's plan), export it, and say how it ended as one protocol line. Also the warm-up
every worker runs once, on a built-in module, so that torch's lazy imports and caches
are warm before the first user job."""

from __future__ import annotations

import faulthandler
import gc
import io
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

from ..core.options import Task, lowered_for
from ..core.sources import Sources
from ..core.targets import Span
from ..find.deps import digest
from ..find.packages import package_base
from ..spec.plan import Plan, make_plan
from . import scratch as scratch_folders
from .overlay import overlay
from .platform import die_with_parent, limit_memory, new_session
from .protocol import End, Exited, Internal, Job, OutOfMemory, Reported, Run, TreeReported, decode, encode
from .readable import interpreter_folders
from .sandbox import available, confine

PRIMED = b"primed\n"  # a primed child's word that it is warm and waits for its job

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


def warm_imports() -> None:
    """What every job needs imported and found, done once here rather than in each job's child."""
    import torch  # noqa: F401 - first: what an interpreter given by mistake most often lacks

    available()  # the sandbox's bindings
    interpreter_folders()  # what a sandboxed job may read of the interpreter
    from ..runtime import in_process  # noqa: F401 - torch._dynamo and exportlens's runtime


def warm_up() -> None:
    """One whole job on the built-in module: torch, libcst, exportlens, all warmed."""
    warm_imports()
    end = run_job(Job(str(WARM_ROOT), f"{WARM_FILE}:Warm", name_span=Span(1), sources={WARM_FILE: WARM_SOURCE}))
    assert isinstance(end, Reported)  # a verdict job, not a tree
    report = end.report
    if report.status.value != "exported":  # a broken environment: say so in the worker's stderr
        print(f"exportlens worker: the warm-up export failed: {report.findings}", file=sys.stderr)
    # leave nothing of it for a user's job to see
    sys.modules.pop(WARM_FILE[:-3], None)
    if str(WARM_ROOT) in sys.path:
        sys.path.remove(str(WARM_ROOT))
    gc.collect()


def run_job(job: Job) -> Reported | TreeReported:
    """One module, in this process: plan it statically (or take the owner's plan), export it
    (or, for a ``Task.TREE`` job, each of its submodules)."""
    from ..runtime.in_process import export_planned  # torch
    from ..runtime.subtree import tree_of

    files = Sources.of(Path(job.root), job.sources)
    with overlay(files.buffers):
        owners = _owner_plan(job, files)
        plan = owners or make_plan([files.path(job.path)], root=files.root, sources=files)
        plan.sources = files
        planned = next((p for p in plan.modules if p.target == job.target), None)
        if planned is None:
            raise LookupError(f"{job.target} is no longer an nn.Module in {job.path}")
        if job.task is Task.TREE:
            return TreeReported(tree_of(plan, planned, job.options))
        report = export_planned(plan, planned, job.options, job.task)
        return Reported(report, replanned=job.plan is not None and owners is None)


def _owner_plan(job: Job, files: Sources) -> Plan | None:
    """The plan the owner sent, if it was made from the texts this job will import."""
    if job.plan is None or any(digest(files, path) != hashed for path, hashed in job.plan.digests.items()):
        return None
    return job.plan.plan


def child_end(job: Job) -> End:
    """How the job ended, as the protocol says it."""
    try:
        return run_job(job)
    except SystemExit as e:  # sys.exit() in the user's code
        return Exited(e.code if isinstance(e.code, int) else 1, f"called sys.exit({e.code!r})")
    except MemoryError:
        return OutOfMemory()
    except BaseException:
        return Internal(traceback.format_exc()[-4000:])


def _confined(job: Job) -> None:
    """A scratch folder of the job's own as its temporary folder, then the sandbox: it
    writes there and to the artifact's folder only (where the kernel offers Landlock)."""
    scratch = scratch_folders.make()  # removed by the warm parent once the job is over
    if lowered_for(job.task, job.options) and job.sandbox and sys.platform.startswith("linux"):
        scratch = _lowering_apart(scratch, job.memory_limit)
    os.environ["TMPDIR"] = tempfile.tempdir = str(scratch)
    writable = [scratch]
    if job.options.artifact is not None:
        job.options.artifact.parent.mkdir(parents=True, exist_ok=True)
        writable.append(job.options.artifact.parent)
    if job.sandbox:
        # read: the project, and where it is a package's inner folder (no pyproject.toml), the
        # package, which its relative imports climb into
        confine(package_base(Path(job.root).resolve()), writable)


def _lowering_apart(scratch: Path, memory_limit: int | None) -> Path:
    """A lowering job's scratch, split: the job's own folder, and the lowering process's, which
    the job cannot write (it compiles there, and runs what it compiled). The lowering process is
    forked now, before the user's module is imported and before this process is confined, and
    confines itself as a job (runtime/lowering/process.py). Returns the job's folder."""
    from ..runtime.lowering.process import start  # torch

    own, lowering = scratch / "job", scratch / "lowering"
    own.mkdir(mode=0o700)
    lowering.mkdir(mode=0o700)
    start(own, lowering, memory_limit)
    return own


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def enter(job: Job) -> None:
    """This process becomes the job's: confined, its memory capped, its imports its own."""
    from ..runtime import run

    _confined(job)
    limit_memory(job.memory_limit)
    run.FRESH_PROCESS = True


def run_in_child(job: Job, res: int) -> int:
    """The job, in this (forked) process: its end as one protocol line on ``res``; returns the exit status."""
    enter(job)
    end = child_end(job)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # the user's output is in the pipe before the result says "done"
        except (OSError, ValueError):
            pass
    report_end(res, end)
    return end.status if isinstance(end, Exited) else 0


def report_end(fd: int, end: End) -> None:
    """The job's last word, one protocol line (the owner checks it: it is the module's to forge)."""
    write_all(fd, encode(end))


def forked(parent: int, request: Run | None, inherited: list[int | None], out: int, res: int, req: int | None) -> None:
    """The forked child: its own session, the parent's descriptors closed, output on ``out``,
    its End (and a crash's Python stack) on ``res``; a primed one waits on ``req`` for its job."""
    code = 70
    try:
        new_session()  # its own process group: one killpg ends it and anything it forks
        die_with_parent(parent)
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        own = {out, res, req}
        for fd in inherited:
            if fd is not None and fd not in own:  # a number the parent reused for this child's pipes
                try:
                    os.close(fd)
                except OSError:
                    pass  # closed in the parent already
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, io.TextIOWrapper):  # (as it is, unless something replaced it)
                stream.reconfigure(line_buffering=True, write_through=True)
        faulthandler.enable(os.fdopen(os.dup(res), "w"))  # a segfault's Python stack, beside the result
        _one_thread()
        if request is None:
            warm_up()
            gc.freeze()
            write_all(res, PRIMED)
            assert req is not None  # a primed child is given its job's pipe
            request = _read_request(req)
        code = run_in_child(request.job, res)
    except BaseException:
        pass
    finally:
        os._exit(code)


def _one_thread() -> None:
    """Real compute in a forked child (running the exported program: runtime/proving/serving.py) on
    one thread: an OpenMP pool started in the warm parent does not survive the fork, and a
    parallel region in the child would wait on it forever."""
    import torch

    torch.set_num_threads(1)


def _read_request(fd: int) -> Run:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 20)
        if not chunk:  # the parent closed the pipe without a job: nothing to do
            os._exit(0)
        data += chunk
    os.close(fd)
    return decode(data, Run)
