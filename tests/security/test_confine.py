"""What a module in an export job can do to the rest of the machine, tried as an attacker
would, through the real CLI (``exportlens check`` in a subprocess) and the real Pool: stop
the processes above it, change the mode or times of files it may not write, leave a process
behind in a session of its own (one that also tries to kill the warm parent), and hold
memory in such processes past the limit. Each module says in the finding it raises what it
managed; the test checks that against /proc and the files themselves.

Where the machine lacks what a test needs (Landlock's signal scope, libseccomp), the test is
skipped and says which, never faked; ``available()`` must say the same."""

from __future__ import annotations

import ctypes.util
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.settings import Overrides
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.platform import fork_is_safe
from exportlens.exporter.workers.pool import Pool
from exportlens.exporter.workers.sandbox import available

REPO = Path(__file__).resolve().parents[2]


def _landlock_abi() -> int:
    try:
        import landlockpy

        return landlockpy.abi_version()
    except Exception:
        return 0


# what this machine offers, asked of the kernel and the system, not of the code under test
LANDLOCK_ABI = _landlock_abi()
LIBSECCOMP = ctypes.util.find_library("seccomp")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes and sandbox")
signals_confined = pytest.mark.skipif(
    LANDLOCK_ABI < 6, reason=f"Landlock ABI {LANDLOCK_ABI} does not scope signals (6 does)"
)
metadata_confined = pytest.mark.skipif(not LIBSECCOMP, reason="no libseccomp here")


HELPERS = """
import os
import signal
import time
from pathlib import Path

import torch

HERE = Path(__file__).parent


def stat_fields(pid):
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def attempt(name, action):
    try:
        action()
        return f"{name}: done"
    except OSError as e:
        return f"{name}: {type(e).__name__}"
"""

MODULES = {
    # SIGSTOP to the warm parent and to its owner, the CLI; then how each of them is doing
    "freezer.py": """
class Freezer(torch.nn.Module):
    def forward(self, x):
        warm = os.getppid()
        above = [warm, int(stat_fields(warm)[1])]
        said = [attempt(f"stop {pid}", lambda pid=pid: os.kill(pid, signal.SIGSTOP)) for pid in above]
        time.sleep(0.3)  # a stop lands at once; give it time all the same
        said += [f"state {pid}: {stat_fields(pid)[0]}" for pid in above]
        raise RuntimeError("; ".join(said))
""",
    # modes, owners and times of a project file and of the user's key
    "toucher.py": """
class Toucher(torch.nn.Module):
    def forward(self, x):
        victim, key = HERE / "victim.py", Path(os.path.expanduser("~/.ssh/id_rsa"))
        mine = (os.getuid(), os.getgid())
        said = [
            attempt("chmod victim", lambda: os.chmod(victim, 0)),
            attempt("fchmod victim", lambda: os.fchmod(os.open(victim, os.O_RDONLY), 0)),
            attempt("utime victim", lambda: os.utime(victim, (0, 0))),
            attempt("chown victim", lambda: os.chown(victim, *mine)),
            attempt("chmod key", lambda: os.chmod(key, 0o666)),
            attempt("utime key", lambda: os.utime(key, (0, 0))),
        ]
        raise RuntimeError("; ".join(said))
""",
    # a sleeper and a killer of the processes above the job, each in a session of its own
    "survivor.py": """
def escape(report, action):
    if os.fork() == 0:
        os.setsid()
        os.write(report, f"{os.getpid()} {action()}\\n".encode())
        time.sleep(600)
        os._exit(0)


def kill_above(job):
    warm = int(stat_fields(job)[1])
    above = [warm, int(stat_fields(warm)[1])]
    return ", ".join(attempt(f"kill {pid}", lambda pid=pid: os.kill(pid, signal.SIGKILL)) for pid in above)


class Survivor(torch.nn.Module):
    def forward(self, x):
        r, w = os.pipe()
        escape(w, lambda: "sleeps")
        job = os.getpid()
        escape(w, lambda: kill_above(job))
        with os.fdopen(r) as said:
            lines = [said.readline().strip(), said.readline().strip()]
        raise RuntimeError("; ".join(lines))
""",
    # three processes in sessions of their own, 250 MiB each: each under the 512 MiB limit, not together
    "hog.py": """
def hog():
    if os.fork() == 0:
        os.setsid()
        held = b"x" * (250 << 20)  # written, so resident
        time.sleep(60)
        os._exit(len(held) and 0)


class Hog(torch.nn.Module):
    def forward(self, x):
        for _ in range(3):
            hog()
        time.sleep(20)  # the export waits while they hold the memory
        return x * 2
""",
}

PYPROJECT = """
[tool.exportlens.modules."freezer.py:Freezer"]
inputs = { x = "f32[2, 3]" }

[tool.exportlens.modules."toucher.py:Toucher"]
inputs = { x = "f32[2, 3]" }

[tool.exportlens.modules."survivor.py:Survivor"]
inputs = { x = "f32[2, 3]" }

[tool.exportlens.modules."hog.py:Hog"]
inputs = { x = "f32[2, 3]" }
memory_limit = "512MiB"
timeout = 40
"""


# -- processes -----------------------------------------------------------------------


def state(pid: int) -> str | None:
    """A process's state letter (R, S, T for stopped, Z ...); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def running(pid: int) -> bool:
    return state(pid) not in (None, "Z", "X")


def gone(pids: list[int], within: float = 30.0) -> list[int]:
    """Those of ``pids`` still running after ``within`` seconds."""
    deadline = time.monotonic() + within
    while (left := [p for p in pids if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def below(pid: int) -> set[int]:
    """Every process under ``pid``, whatever session it moved to."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*") if Path(f"/proc/{p}/task").exists() else ():
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += kids - found
            found |= kids
    return found


def test_the_status_says_what_is_enforced_here():
    said = available()
    assert said.startswith(f"landlock (ABI {LANDLOCK_ABI})") if LANDLOCK_ABI else said.startswith("none")
    assert ("signals" in said) == (LANDLOCK_ABI >= 6), said
    assert ("seccomp: file modes" in said) == bool(LIBSECCOMP), said


# -- one run of the CLI over a project of hostile modules ------------------------------


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``exportlens check --format json`` on the project, run once; the key and the
    project file the modules go for, as they were before, beside its answer."""
    tmp = tmp_path_factory.mktemp("confine")
    home, project = tmp / "home", tmp / "project"
    (home / ".ssh").mkdir(parents=True)
    project.mkdir()
    key = home / ".ssh" / "id_rsa"
    key.write_text("PRIVATE KEY")
    key.chmod(0o600)
    (project / "victim.py").write_text("# the user's work\n")
    (project / "victim.py").chmod(0o644)
    (project / "pyproject.toml").write_text(PYPROJECT)
    for name, text in MODULES.items():
        (project / name).write_text(textwrap.dedent(HELPERS) + textwrap.dedent(text))
    before = {p: (p.stat().st_mode, p.stat().st_mtime_ns, p.stat().st_uid) for p in (key, project / "victim.py")}

    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO))
    cli = subprocess.Popen(
        [sys.executable, "-m", "exportlens.cli", "check", str(project), "--format", "json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = cli.communicate(timeout=240)
    except subprocess.TimeoutExpired:  # frozen: free whatever a module stopped, then fail
        for pid in [cli.pid, *below(cli.pid)]:
            os.kill(pid, signal.SIGKILL)
        cli.communicate()
        pytest.fail("exportlens check did not finish: a module froze it")
    assert cli.returncode == 1, err
    modules = {m["target"].split(":")[1]: m for m in json.loads(out)["modules"]}
    return {"modules": modules, "cli": cli.pid, "before": before, "project": project}


def message(checked: dict, name: str) -> str:
    (finding,) = checked["modules"][name]["findings"]
    return finding["message"]


@signals_confined
@pytest.mark.slow
def test_a_module_cannot_stop_the_warm_parent_or_the_cli(checked: dict):
    said = message(checked, "Freezer")
    stops = dict(re.findall(r"stop (\d+): (\w+)", said))
    assert len(stops) == 2 and set(stops.values()) == {"PermissionError"}, said
    assert str(checked["cli"]) in stops  # the second is the CLI itself
    states = dict(re.findall(r"state (\d+): (\w)", said))
    assert set(states) == set(stops) and "T" not in states.values(), said  # neither is stopped
    assert "sandbox = false" in said  # the refusal is said to be the sandbox's


@pytest.mark.slow  # alone among its file's quick tests, it would start the file's whole check
@metadata_confined
def test_a_module_cannot_change_the_mode_owner_or_times_of_files(checked: dict):
    said = message(checked, "Toucher")
    for attempt in ("chmod victim", "fchmod victim", "utime victim", "chown victim", "chmod key", "utime key"):
        assert f"{attempt}: PermissionError" in said, said
    for path, (mode, mtime, uid) in checked["before"].items():
        now = path.stat()
        assert (now.st_mode, now.st_mtime_ns, now.st_uid) == (mode, mtime, uid), path


@signals_confined
def test_what_a_module_starts_in_a_session_of_its_own_ends_with_its_job(checked: dict):
    said = message(checked, "Survivor")
    sleeper = re.search(r"(\d+) sleeps", said)
    killer = re.search(r"(\d+) kill (\d+): (\w+), kill (\d+): (\w+)", said)
    assert sleeper and killer, said
    assert (killer[3], killer[5]) == ("PermissionError", "PermissionError"), said  # the warm parent and the CLI live on
    assert str(checked["cli"]) in (killer[2], killer[4])  # above the warm parent; with no fork, above the job itself
    assert gone([int(sleeper[1]), int(killer[1])]) == []


def test_memory_held_in_a_session_of_its_own_counts_toward_the_limit(checked: dict):
    hog = checked["modules"]["Hog"]
    (finding,) = hog["findings"]
    assert finding["code"] == "EL503", finding
    assert finding["message"].startswith("export needed more than the memory limit of 512MiB"), finding["message"]
    lines = (checked["project"] / "hog.py").read_text().splitlines()
    assert finding["line"] == next(i for i, text in enumerate(lines, 1) if text.startswith("class Hog"))  # on the class


# -- the owner shuts down while a job runs -------------------------------------------------

SLEEPERS = """
import os
import time

import torch


def sleeper(levels):
    if os.fork() == 0:
        os.setsid()
        if levels > 1:
            sleeper(levels - 1)
        time.sleep(600)
        os._exit(0)


class Sleepers(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        sleeper(2)  # a child and a grandchild, each in a session of its own
        sleeper(1)
        time.sleep(600)
        return x
"""


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unconfined"])
@pytest.mark.slow
def test_nothing_a_running_job_started_outlives_the_pool(tmp_path: Path, sandbox: bool):
    """What the server and the CLI do at their end: close the pool with a job running."""
    (tmp_path / "sleepers.py").write_text(SLEEPERS)
    plan = make_plan([tmp_path])
    (planned,) = plan.modules
    started = threading.Event()
    pool = Pool(jobs=1)
    try:
        future = pool.submit(
            job_for(plan, planned, Options(overrides=Overrides(sandbox=sandbox))), on_start=started.set
        )
        assert started.wait(120), future.done() and future.result()
        (job,) = pool.job_pids().values()
        deadline = time.monotonic() + 60
        # the three sleepers, and a spare's cleaner beside them (scratch.remove_if_orphaned)
        expected = 3 if fork_is_safe() else 4
        while len(escaped := below(job)) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(escaped) == expected, escaped
    finally:
        pool.close()
    assert gone([job, *escaped]) == []
