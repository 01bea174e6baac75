"""A job cannot stall the process that runs it, flood its owner's memory, or leave its
scratch folders behind: real `exportlens check` runs on modules that try, each beside a
module that exports, whose verdict must come through unharmed.

Each run gets a private temporary folder (``TMPDIR``), where the owner makes the
``exportlens-worker-*`` folders; what is left there after the run is what leaked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from exportlens.exporter.workers.platform import NO_FORK, fork_is_safe

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the attacks are Linux's"),
]

FINE = """
import torch
from torch import nn


class Fine(nn.Module):
    def forward(self, x):
        return x * 2

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""

# Registers a pipe of its own under fd 0 in every epoll instance it inherited (the warm
# parent's selector was one), makes it readable, then hangs: a parent that trusts that
# event blocks reading its stdin, and neither this job's timeout nor the next job is heard.
STALL = """
import os
import select
import time

import torch
from torch import nn


def stall_the_parent():
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if "eventpoll" in target:
            ep = select.epoll.fromfd(int(name))
            r, w = os.pipe()
            os.dup2(r, 0)
            ep.register(0, select.EPOLLIN)
            os.write(w, b"x")


class Stall(nn.Module):
    def forward(self, x):
        stall_the_parent()
        time.sleep(600)
        return x + 1

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""

# A gigabyte with no end of line into every pipe it can write but stdout and stderr: the
# result pipe a forked job's End goes on, and a spare's protocol pipe to its owner.
FLOOD = """
import fcntl
import os

import torch
from torch import nn


def flood():
    chunk = b"x" * (1 << 20)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            pipe = os.readlink(f"/proc/self/fd/{name}").startswith("pipe:")
            writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
        except OSError:
            continue
        if fd > 2 and pipe and writable:
            for _ in range(1024):
                os.write(fd, chunk)


class Flood(nn.Module):
    def forward(self, x):
        flood()
        return x + 1

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""

SEGFAULT = """
import ctypes

import torch
from torch import nn


class Crash(nn.Module):
    def forward(self, x):
        ctypes.string_at(0)
        return x

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""

LOOP = """
import torch
from torch import nn


class Loop(nn.Module):
    def forward(self, x):
        while True:
            pass

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""

KILL_PARENT = """
import os

import torch
from torch import nn


class KillParent(nn.Module):
    def forward(self, x):
        os.kill(os.getppid(), 9)
        return x

    @staticmethod
    def example_inputs():
        return (torch.randn(3),)
"""


def project(root: Path, modules: dict[str, str], timeout: int = 5) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(f"[tool.exportlens]\ntimeout = {timeout}\n")
    for name, text in {"fine": FINE, **modules}.items():
        (root / f"{name}.py").write_text(textwrap.dedent(text).lstrip())
    return root


def environment(tmp: Path, no_fork: bool = False) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != NO_FORK}
    return {**env, "TMPDIR": str(tmp), **({NO_FORK: "1"} if no_fork else {})}


def check(root: Path, env: dict[str, str], within: float = 120.0, jobs: int = 1) -> tuple[dict, int]:
    """`exportlens check` of ``root`` as JSON, and its peak resident memory in KiB (VmHWM,
    read while it runs): it must end within ``within`` seconds."""
    command = [sys.executable, "-m", "exportlens.cli", "check", ".", "--no-cache", "--format", "json", "-j", str(jobs)]
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    peak, deadline = 0, time.monotonic() + within
    while proc.poll() is None:
        peak = max(peak, _hwm(proc.pid))
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"exportlens check did not end within {within:g} s")
        time.sleep(0.02)
    reader.join()
    return json.loads(out[0]), peak


def _hwm(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def verdicts(report: dict) -> dict[str, tuple[str, list[str]]]:
    return {
        m["target"].split(":")[1]: (m["status"], [f"{f['code']} {f['message']}" for f in m["findings"]])
        for m in report["modules"]
    }


def leftovers(tmp: Path, within: float = 30.0) -> list[str]:
    """The scratch folders still in ``tmp`` once every worker that used them is gone."""
    deadline = time.monotonic() + within
    while (
        left := sorted(p.name for p in tmp.glob("exportlens-worker-*")) or _workers_of(tmp)
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left or [f"worker {pid} still running" for pid in _workers_of(tmp)]


def _workers_of(tmp: Path) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and str(tmp).encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            continue
    return found


forking = pytest.mark.skipif(not fork_is_safe(), reason="the warm parent's selector: only where jobs are forked")


@forking
def test_a_job_that_plants_a_pipe_in_the_parents_epoll_stalls_nothing(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"stall": STALL}, timeout=3)
    report, _ = check(root, environment(tmp_path / "tmp"), within=90)
    found = verdicts(report)
    assert found["Fine"] == ("exported", [])
    status, findings = found["Stall"]
    assert status == "failed" and findings and findings[0].startswith("EL501"), findings


@pytest.mark.parametrize("no_fork", [False, True], ids=["forked", "spare"])
def test_a_flood_with_no_end_of_line_is_a_crash_and_the_owner_stays_small(tmp_path: Path, no_fork: bool) -> None:
    root = project(tmp_path / "p", {"flood": FLOOD}, timeout=60)
    report, peak = check(root, environment(tmp_path / "tmp", no_fork), within=150)
    found = verdicts(report)
    assert found["Fine"] == ("exported", [])
    status, findings = found["Flood"]
    assert status == "failed" and len(findings) == 1, findings
    assert findings[0].startswith("EL502") and "line of more than 256 MiB" in findings[0], findings
    # the owner holds at most one bounded line (256 MiB), never the gigabyte it was sent
    assert peak < 400 << 10, f"exportlens check peaked at {peak >> 10} MiB"


@pytest.mark.parametrize("no_fork", [False, True], ids=["forked", "spare"])
def test_no_scratch_folder_outlives_a_run_whatever_its_jobs_did(tmp_path: Path, no_fork: bool) -> None:
    modules = {"crash": SEGFAULT, "loop": LOOP} | ({} if no_fork else {"kill_parent": KILL_PARENT})
    root = project(tmp_path / "p", modules, timeout=2)
    tmp = tmp_path / "tmp"
    report, _ = check(root, environment(tmp, no_fork), jobs=2)
    found = verdicts(report)
    assert found["Fine"][0] == "exported" and found["Loop"][1][0].startswith("EL501"), found
    assert found["Crash"][1][0].startswith("EL502"), found
    assert leftovers(tmp) == []


@pytest.mark.parametrize("no_fork", [False, True], ids=["forked", "spare"])
@pytest.mark.parametrize("when", ["warming up", "running a job"])
def test_an_owner_killed_leaves_no_scratch_folder(tmp_path: Path, no_fork: bool, when: str) -> None:
    root = project(tmp_path / "p", {"loop": LOOP}, timeout=60)
    tmp = tmp_path / "tmp"
    command = [sys.executable, "-m", "exportlens.cli", "check", ".", "--no-cache", "-j", "1"]
    owner = subprocess.Popen(command, cwd=root, env=environment(tmp, no_fork), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    # a job folder is made when a job starts; the worker's own folder as it starts
    started = "exportlens-worker-*/job-*" if when == "running a job" else "exportlens-worker-*"
    while not list(tmp.glob(started)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp.glob(started)), f"no job started within 60 s: {list(tmp.iterdir())}"
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert leftovers(tmp) == []
