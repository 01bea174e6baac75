"""The worker pool against modules that hang, crash, exit, eat memory, fork and flood.

Everything runs for real: a Pool, its warm parent and forked children, torch, and
the projects in tests/data/workers copied to a temporary folder. Fault modules
record their process ids beside themselves; /proc tells what is still running.
With ``EXPORTLENS_NO_FORK=1`` the same tests run each job in a spare, as on macOS and
Windows (.ci/run runs them so); the few about forking itself are skipped then.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import ModuleReport, Status
from exportlens.exporter.core.settings import Overrides
from exportlens.exporter.spec.plan import Plan, Planned, make_plan
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.platform import fork_is_safe
from exportlens.exporter.workers.pool import Cancelled, Job, Pool

DATA = Path(__file__).parent / "data" / "workers" / "project"
REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")
# what only a warm parent that forks does (EXPORTLENS_NO_FORK: one spare per job, no parent above them)
forking = pytest.mark.skipif(
    not fork_is_safe(), reason="a warm parent that forks its jobs: not with EXPORTLENS_NO_FORK"
)


# -- processes -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Proc:
    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int


def processes() -> list[Proc]:
    """Every process that is running (zombies are dead: they only wait to be reaped)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
        if fields[0] not in ("Z", "X"):
            out.append(Proc(int(name), fields[0], int(fields[1]), int(fields[2]), int(fields[3])))
    return out


def alive(pid: int) -> bool:
    return any(p.pid == pid for p in processes())


def ends(pid: int | None) -> bool:
    """Whether ``pid`` (if any) is gone within 30 s: a kill is sent before the result, and lands a
    moment later on a loaded machine."""
    deadline = time.monotonic() + 30
    while pid is not None and alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid is None or not alive(pid)


def left_behind(job_pid: int, warm_pid: int | None, primed: int, extra: tuple[int, ...] = ()) -> list[Proc]:
    """What is still running of a finished job: its process, anything in its session or
    process group, anything else it started, or a child of the warm parent that is not an
    idle primed spare (no warm parent: spares). The kills are sent before the result; give
    them a moment to land."""

    def found() -> list[Proc]:
        procs = processes()
        parents = {p.ppid for p in procs}
        bad = [p for p in procs if job_pid in (p.pid, p.pgrp, p.session) or p.pid in extra]
        spares = [p for p in procs if p.ppid == warm_pid]
        bad += [p for p in spares if p.session != p.pid or p.pid in parents]  # a spare is a session of one
        if len(spares) > primed:
            bad += spares
        return bad

    deadline = time.monotonic() + 30
    while (bad := found()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return bad


def recorded(project: Path, module: str, name: str = "job") -> int:
    return int((project / f"faults/{module}.{name}.pid").read_text())


def warm_pid(pool: Pool) -> int | None:
    """The warm parent's pid; None where each job runs in a spare."""
    assert pool.warm_pid is not None or not pool.use_fork
    return pool.warm_pid


# -- a project and a pool shared by the tests ----------------------------------------


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workers") / "project"
    shutil.copytree(DATA, root)
    return root


def planned(root: Path, target: str, sources: dict[Path, str] | None = None) -> tuple[Plan, Planned]:
    plan = make_plan([root], sources=sources)
    matches = [p for p in plan.modules if p.target == target]
    assert matches, (target, [p.target for p in plan.modules], plan.findings)
    return plan, matches[0]


# the fault modules write their pids beside their files for these tests to find, which the
# sandbox forbids: they run unconfined, and the sandbox has tests of its own (test_sandbox.py)
UNCONFINED = Options(overrides=Overrides(sandbox=False))


def job(root: Path, target: str, options: Options = UNCONFINED, *, cache: bool = True, **kwargs) -> Job:
    plan, p = planned(root, target)
    made = job_for(plan, p, options, **kwargs)
    return made if cache else dataclasses.replace(made, key="")


@pytest.fixture(scope="module")
def pool(root: Path):
    with Pool(jobs=2) as pool:
        first = pool.run(job(root, "faults/fine.py:Fine"))  # warm: the timings below are the jobs' own
        assert first.status is Status.EXPORTED, first.findings
        yield pool


def fine_again(pool: Pool, root: Path) -> ModuleReport:
    """A normal module, really run (not from the cache), in the same pool."""
    report = pool.run(job(root, "faults/fine.py:Fine", cache=False))
    assert report.status is Status.EXPORTED, report.findings
    return report


# -- faults ------------------------------------------------------------------------------

FAULTS = [
    # module, code, message pattern
    # waiting out a timeout: in the full suite only (slow)
    pytest.param("loop", "EL501", r"^export did not finish within 3 s and was stopped$", marks=pytest.mark.slow),
    pytest.param("import_hang", "EL501", r"^export did not finish within 3 s and was stopped$", marks=pytest.mark.slow),
    (
        "segfault",
        "EL502",
        r"^the export process was killed by SIGSEGV at faults/segfault\.py:13 in forward; it printed: about to crash$",
    ),
    ("hard_exit", "EL502", r"^the export process exited with status 3 before reporting; it printed: leaving now$"),
    ("sys_exit", "EL502", r"^the module called sys\.exit\(2\) while exporting; it printed: expected a 2-d input$"),
    ("flood", "EL502", r"^the export process exited with status 5 before reporting; it printed: after the flood$"),
    # its End comes while the pipe still holds its output's tail: that tail is read, not waited for
    ("flood_exit", "EL502", r"^the module called sys\.exit\(4\) while exporting; it printed: flood over$"),
    (
        "big_tensor",
        "EL503",
        r"^export needed more than the memory limit of 1GiB"
        r" \(BigTensor\(\) failed: RuntimeError: .*can't allocate memory",
    ),
    # a MemoryError says nothing: the message ends with what raised it, not with "while exporting: )"
    (
        "big_bytes",
        "EL503",
        r"^export needed more than the memory limit of 1GiB \(forward raised MemoryError while exporting\);"
        r" `device = \"meta\"` in its table builds the module without allocating its weights,"
        r" and checks that it exports$",
    ),
]


def class_name_span(root: Path, module: str) -> tuple[int, int, int]:
    for number, text in enumerate((root / f"faults/{module}.py").read_text().splitlines(), 1):
        if m := re.match(r"class (\w+)", text):
            return number, m.start(1) + 1, m.end(1) + 1
    raise AssertionError(module)


def allocation_line(root: Path, module: str) -> int:
    lines = (root / f"faults/{module}.py").read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if "past the 1 GiB cap" in text)


@pytest.mark.parametrize(
    "module, code, message", FAULTS, ids=[f.values[0] if hasattr(f, "values") else f[0] for f in FAULTS]
)
@pytest.mark.slow
def test_a_fault_becomes_a_finding_and_the_pool_goes_on(pool: Pool, root: Path, module: str, code: str, message: str):
    name = "".join(part.title() for part in module.split("_"))
    the_job = job(root, f"faults/{module}.py:{name}")
    started: list[float] = []  # when its process started: a spare's own start is not the job's
    report = pool.submit(the_job, on_start=lambda: started.append(time.monotonic())).result()
    elapsed = time.monotonic() - started[0]

    assert elapsed < the_job.timeout + 10, f"{module}: {elapsed:.1f} s"  # stopped at its timeout, not left to run
    assert report.status is Status.FAILED
    (finding,) = report.findings
    assert finding.code == code and re.search(message, finding.message), finding.message
    if code == "EL503":  # a refused allocation: on the line that asked for the memory
        assert finding.line == allocation_line(root, module)
    else:  # the squiggle is on the class name
        line, column, end = class_name_span(root, module)
        assert (finding.path, finding.line, finding.column, finding.end_line, finding.end_column) == (
            f"faults/{module}.py",
            line,
            column,
            line,
            end,
        )
    assert len(finding.detail) < 64 * 1024  # a flood of output is kept bounded
    assert the_job.key not in pool.cache  # never cached: the next check tries again

    assert left_behind(recorded(root, module), warm_pid(pool), pool.primed) == []
    fine_again(pool, root)


def test_a_crash_carries_what_the_module_printed_and_where_it_crashed(pool: Pool, root: Path):
    report = pool.run(job(root, "faults/segfault.py:Segfault"))
    detail = report.findings[0].detail
    assert "last output:\nabout to crash" in detail
    assert re.search(r'File ".*faults/segfault\.py", line 13 in forward', detail)


def test_processes_a_module_forks_die_with_the_job(pool: Pool, root: Path):
    report = pool.run(job(root, "faults/forks.py:Forks"))
    assert report.status is Status.EXPORTED, report.findings
    children = (recorded(root, "forks", "child"), recorded(root, "forks", "escaped"))
    assert left_behind(recorded(root, "forks"), warm_pid(pool), pool.primed, extra=children) == []
    fine_again(pool, root)


# -- cancelling ----------------------------------------------------------------------------


def start_slow(pool: Pool, root: Path) -> tuple[object, int]:
    """Submit the module that sleeps in forward; return its Future once it runs."""
    (root / "faults/slow.job.pid").unlink(missing_ok=True)
    started = threading.Event()
    future = pool.submit(job(root, "faults/slow.py:Slow"), on_start=started.set)
    # under a loaded CI machine the warm parent may be restarting: say what the pool held if not
    assert started.wait(60), (future.done() and future.result(), pool.warm_pid, pool.job_pids(), pool.launched)
    pid_file = root / "faults/slow.job.pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:  # it has imported the module
        time.sleep(0.02)
    return future, int(pid_file.read_text())


def test_a_newer_job_for_the_same_module_supersedes_the_older(pool: Pool, root: Path):
    older, pid = start_slow(pool, root)
    quick = (root / "faults/slow.py").read_text().replace("time.sleep(600)", "pass")
    plan, p = planned(root, "faults/slow.py:Slow", {root / "faults/slow.py": quick})
    newer = pool.submit(job_for(plan, p, UNCONFINED, sources={"faults/slow.py": quick}))

    with pytest.raises(Cancelled):
        older.result(timeout=30)
    report = newer.result(timeout=30)
    assert report.status is Status.EXPORTED, report.findings
    assert left_behind(pid, warm_pid(pool), pool.primed) == []


def test_cancel_kills_a_running_job(pool: Pool, root: Path):
    future, pid = start_slow(pool, root)
    pool.cancel("faults/slow.py:Slow")
    with pytest.raises(Cancelled):
        future.result(timeout=30)
    assert left_behind(pid, warm_pid(pool), pool.primed) == []
    fine_again(pool, root)


def test_cancelling_one_job_leaves_another_of_the_same_module_running(pool: Pool, root: Path):
    """A submodule tree's job, cancelled, takes no export of its module with it."""
    future, pid = start_slow(pool, root)
    quick = (root / "faults/slow.py").read_text().replace("time.sleep(600)", "pass")
    plan, p = planned(root, "faults/slow.py:Slow", {root / "faults/slow.py": quick})
    beside = pool.submit(job_for(plan, p, UNCONFINED, sources={"faults/slow.py": quick}), supersede=False)
    assert pool.cancel_job(future)
    with pytest.raises(Cancelled):
        future.result(timeout=30)
    assert beside.result(timeout=30).status is Status.EXPORTED
    assert left_behind(pid, warm_pid(pool), pool.primed) == []
    assert not pool.cancel_job(future)  # nothing left to cancel


@pytest.mark.slow
def test_a_verdict_queued_after_background_work_runs_before_it(root: Path):
    """A fix's proof or a serving run (``background``) waits behind every verdict queued,
    even one queued after it: opening many files never holds a verdict behind them."""
    with Pool(jobs=1) as one:
        started: list[str] = []
        slow, _ = start_slow(one, root)  # holds the only slot while the others queue
        proof = one.submit(
            job(root, "faults/fine.py:Fine", cache=False), lambda: started.append("proof"), background=True
        )
        verdict = one.submit(job(root, "models/net.py:Net", cache=False), lambda: started.append("verdict"))
        one.cancel("faults/slow.py:Slow")
        assert verdict.result(timeout=60).status is Status.EXPORTED
        assert proof.result(timeout=60).status is Status.EXPORTED
        assert started == ["verdict", "proof"]
        with pytest.raises(Cancelled):
            slow.result(timeout=30)


# -- the result cache ------------------------------------------------------------------


def test_an_unchanged_module_is_answered_from_the_cache(pool: Pool, root: Path):
    first = pool.run(job(root, "models/net.py:Net"))
    assert first.status is Status.EXPORTED, first.findings
    launched = pool.launched
    again = pool.run(job(root, "models/net.py:Net"))
    assert again is first and pool.launched == launched  # no process was started


def test_what_can_change_the_verdict_invalidates_the_cache(pool: Pool, root: Path):
    first = pool.run(job(root, "models/net.py:Net"))
    keys = {job(root, "models/net.py:Net").key}

    helpers = root / "models/helpers.py"
    original = helpers.read_text()
    helpers.write_text(original.replace("torch.relu(x)", "torch.tanh(x)"))  # a file net.py imports
    try:
        edited = pool.run(job(root, "models/net.py:Net"))
        assert edited is not first and edited.status is Status.EXPORTED
        keys.add(job(root, "models/net.py:Net").key)
    finally:
        helpers.write_text(original)
    assert pool.run(job(root, "models/net.py:Net")) is first  # and back again

    keys.add(job(root, "models/net.py:Net", Options(overrides=Overrides(strict=True, sandbox=False))).key)  # options
    keys.add(job(root, "models/net.py:Net", environment="another interpreter or torch").key)  # environment
    pyproject = root / "pyproject.toml"
    spec = pyproject.read_text()
    pyproject.write_text(spec.replace("init = { hidden = 8 }", "init = { hidden = 16 }"))  # the spec
    try:
        keys.add(job(root, "models/net.py:Net").key)
    finally:
        pyproject.write_text(spec)
    assert len(keys) == 5


# -- unsaved buffers ---------------------------------------------------------------------

DATA_DEPENDENT = textwrap.dedent(
    """
    import torch
    from torch import nn

    from models.helpers import act


    class Net(nn.Module):
        def __init__(self, hidden: int = 8):
            super().__init__()
            self.fc = nn.Linear(4, hidden)

        def forward(self, x):
            h = act(self.fc(x))
            positive = (h > 0).sum().item()
            if positive > 0:
                return h
            return -h
    """
).lstrip()


def unsaved(root: Path, text: str, planner: str = "owner") -> Job:
    """The job the editor sends for an unsaved models/net.py holding ``text``. The worker
    uses the owner's static plan; without one (``planner="worker"``) it plans the text itself."""
    plan, p = planned(root, "models/net.py:Net", {root / "models/net.py": text})
    made = job_for(plan, p, Options(), sources={"models/net.py": text})
    return made if planner == "owner" else dataclasses.replace(made, plan=None, key="")  # and really run


@pytest.mark.parametrize("planner", ["owner", "worker"])
def test_unsaved_text_that_fails_is_exported_instead_of_the_file_on_disk(pool: Pool, root: Path, planner: str):
    on_disk = pool.run(job(root, "models/net.py:Net"))
    assert on_disk.status is Status.EXPORTED
    buffer = "# two lines the disk\n# does not have\n" + DATA_DEPENDENT
    report = pool.run(unsaved(root, buffer, planner))
    assert report is not on_disk and report.status is Status.FAILED
    (finding,) = [f for f in report.findings if f.code == "EL101"]
    line = buffer.splitlines().index("        if positive > 0:") + 1
    assert (finding.path, finding.line) == ("models/net.py", line)  # the buffer's line, not the disk's
    (edit,) = finding.fixes[0].edits
    assert edit.path == "models/net.py" and edit.line == line  # the fix edits the buffer too


@pytest.mark.parametrize("planner", ["owner", "worker"])
def test_unsaved_text_that_exports_beats_a_failing_file_on_disk(pool: Pool, root: Path, planner: str):
    net = root / "models/net.py"
    saved = net.read_text()
    net.write_text(DATA_DEPENDENT)
    try:
        assert pool.run(job(root, "models/net.py:Net")).status is Status.FAILED
        report = pool.run(unsaved(root, saved, planner))
        assert report.status is Status.EXPORTED, report.findings
        assert unsaved(root, saved).key != job(root, "models/net.py:Net").key
    finally:
        net.write_text(saved)


def test_a_plan_made_from_other_text_than_the_worker_imports_is_made_again(pool: Pool, root: Path):
    saved = "from torch import nn\n\n\nclass Other(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    buffer = saved.replace("class Other", "import torch\n\n\nclass Other") + (
        "\n    @staticmethod\n    def example_inputs():\n        return (torch.randn(2, 4),)\n"
    )
    (root / "models/other.py").write_text(saved)
    try:
        # the owner planned the unsaved buffer (its example_inputs is the spec) but sends no text:
        # the worker imports the file on disk, which has no example_inputs and so no spec
        plan, p = planned(root, "models/other.py:Other", {root / "models/other.py": buffer})
        made = job_for(plan, p, Options())
        report = pool.run(made)
        assert report.status is Status.SKIPPED and [f.code for f in report.findings] == ["EL007"], report.findings
        # not kept: its key names the text the owner planned, the next export of that text must run
        assert made.key and made.key not in pool.cache
    finally:
        (root / "models/other.py").unlink()


# -- the warm parent ----------------------------------------------------------------------


@forking
@pytest.mark.slow  # starts torch twice
def test_a_new_interpreter_restarts_the_warm_parent_whose_start_does_not_count(pool: Pool, root: Path, tmp_path: Path):
    old = warm_pid(pool)
    assert pool.run(job(root, "models/net.py:Net")).status is Status.EXPORTED
    slow, slow_pid = start_slow(pool, root)
    # a wrapper, not a symlink: a symlink out of a venv loses the venv (pyvenv.cfg) and its torch
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    pool.python = str(python)

    # the new parent imports torch and exports once (seconds) before the job's 2 s begin
    report = pool.run(
        job(root, "faults/fine.py:Fine", Options(overrides=Overrides(timeout=2, sandbox=False)), cache=False)
    )
    assert report.status is Status.EXPORTED, report.findings
    assert warm_pid(pool) != old and not alive(old) and not alive(slow_pid)
    assert not pool.cache  # verdicts of the old environment were dropped

    # the job that was running on the old parent was sent to the new one
    deadline = time.monotonic() + 30
    while recorded(root, "slow") == slow_pid and time.monotonic() < deadline:
        time.sleep(0.02)
    again = recorded(root, "slow")
    assert [p.ppid for p in processes() if p.pid == again] == [warm_pid(pool)]
    pool.cancel("faults/slow.py:Slow")
    with pytest.raises(Cancelled):
        slow.result(timeout=30)


@forking
@pytest.mark.slow  # waits out a timeout and the grace after it
def test_a_warm_parent_that_never_reports_a_stopped_job_is_replaced_and_the_job_still_ends(root: Path):
    """Every wait has a deadline: a warm parent stalled (here stopped) never reports the end of
    the job the owner killed on its timeout; the job still gets its EL501, and the next job runs."""
    with Pool(jobs=1) as own:
        looping = own.submit(job(root, "faults/loop.py:Loop", cache=False), on_start=lambda: None)
        deadline = time.monotonic() + 120
        while not own.job_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        stalled = warm_pid(own)
        os.kill(stalled, signal.SIGSTOP)
        report = looping.result(timeout=3 + 15 + 30)
        (finding,) = report.findings
        assert (finding.code, finding.message) == ("EL501", "export did not finish within 3 s and was stopped")
        assert not alive(stalled)
        fine_again(own, root)


def test_a_worker_that_never_starts_gives_a_timeout_finding(root: Path, tmp_path: Path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexec sleep 600\n")
    python.chmod(0o755)
    with Pool(str(python), 1, startup_timeout=1) as stuck:
        report = stuck.run(job(root, "faults/fine.py:Fine"))
        (finding,) = report.findings
        assert finding.code == "EL501" and finding.message.startswith("the export worker did not start within 1 s"), (
            finding.message
        )
        assert ends(stuck.warm_pid)


def test_a_worker_without_torch_says_why(root: Path, tmp_path: Path):
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')  # no site-packages: no torch
    python.chmod(0o755)
    with Pool(str(python), 1) as broken:
        report = broken.run(job(root, "faults/fine.py:Fine"))
    (finding,) = report.findings
    assert finding.code == "EL502" and "No module named 'torch'" in finding.message, finding.message


OWNER = """
import sys, threading, time
from pathlib import Path
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.core.options import Options
from exportlens.exporter.core.settings import Overrides
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.pool import Pool

root = Path(sys.argv[1])
plan = make_plan([root])
(slow,) = [p for p in plan.modules if p.target == "faults/slow.py:Slow"]
pool = Pool(jobs=1)
started = threading.Event()
pool.submit(job_for(plan, slow, Options(overrides=Overrides(sandbox=False))), on_start=started.set)
started.wait()
print(pool.warm_pid, flush=True)
time.sleep(600)
"""


@pytest.mark.slow  # starts a pool of its own
def test_killing_the_owner_kills_the_warm_parent_and_its_jobs(root: Path):
    """The warm parent and its children, or (no fork) the running spare and the idle one."""
    (root / "faults/slow.job.pid").unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(root)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        owner.stdout.readline()  # its job has started
        deadline = time.monotonic() + 30
        while not (root / "faults/slow.job.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        started = [p.pid for p in processes() if p.ppid == owner.pid]
        tree = started + [p.pid for p in processes() if p.ppid in started]  # a warm parent's job and primed child
        assert recorded(root, "slow") in tree
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in tree if alive(pid)] == []


META_HINT = (
    '; `device = "meta"` in its table builds the module without allocating its weights, and checks that it exports'
)


def test_the_memory_limit_holds_for_a_module_that_forks(pool: Pool, root: Path):
    """Four children of 300 MiB each: every process is under the 512 MiB limit, their sum
    is not. The job's process group is stopped and the finding says why."""
    started = time.monotonic()
    report = pool.run(job(root, "faults/fork_hog.py:ForkHog", cache=False))
    (finding,) = report.findings
    assert finding.code == "EL503", finding
    assert finding.message == "export needed more than the memory limit of 512MiB" + META_HINT, finding.message
    assert time.monotonic() - started < 20  # stopped when it crossed the limit, not once forward's 20 s sleep ended
    fine_again(pool, root)


@forking  # a spare's parent is the owner: here, pytest
@pytest.mark.slow  # starts torch twice
def test_a_module_that_kills_the_warm_parent_does_not_take_its_neighbour_s_verdict(root: Path):
    """Both jobs die with the warm parent; each is run again alone, so the one that kills
    it gets EL502 and the one that loops gets its own EL501."""
    with Pool(jobs=2) as pool:
        killer = pool.submit(job(root, "faults/kill_parent.py:KillParent", cache=False))
        looper = pool.submit(job(root, "faults/loop.py:Loop", cache=False))
        killed, looped = killer.result(timeout=120), looper.result(timeout=120)
    assert [f.code for f in killed.findings] == ["EL502"], killed.findings
    assert "the export worker process died" in killed.findings[0].message
    assert [f.code for f in looped.findings] == ["EL501"], looped.findings


def test_third_party_imports_are_named_for_the_warm_worker_and_the_project_s_own_are_not(root: Path):
    made = job(root, "faults/preloaded.py:Preloaded")
    assert made.preload == ("hypothesis",)  # not faults.pid (the project's), sys (stdlib) or torch (always warm)


def test_the_warm_worker_imports_a_module_s_third_party_packages_before_forking_its_child(pool: Pool, root: Path):
    """Each job's child starts with transformers (here: hypothesis) already imported, instead
    of importing it again; the module raises if its child had to import it itself. Children
    primed before the import are retired, never handed the job (a killed one was, once)."""
    fine_again(pool, root)
    time.sleep(1.0)  # idle: the warm parent primes children ahead of the next job
    report = pool.run(job(root, "faults/preloaded.py:Preloaded", cache=False))
    assert report.status is Status.EXPORTED, [str(f) for f in report.findings]
