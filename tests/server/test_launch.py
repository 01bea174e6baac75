"""``exportlens serve``'s first moments (issue 40): the warm parent starts before the server
imports its own code, so that torch imports beside pygls, libcst and the handlers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from exportlens.isolation import command, environment

WORKER = "exportlens.exporter.workers.worker"


def _worker_of(pid: int) -> psutil.Process | None:
    for child in psutil.Process(pid).children():
        try:
            if WORKER in " ".join(child.cmdline()):
                return child
        except psutil.Error:  # gone, or a zombie, meanwhile
            continue
    return None


@pytest.mark.slow
def test_the_warm_worker_starts_while_the_server_still_imports_its_own_code(tmp_path: Path):
    """A pygls whose import never ends: the server never gets to answer anything, and its warm
    worker has started all the same (it was started after that import, 0.6-1 s later)."""
    shadow = tmp_path / "shadow" / "pygls"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("import time\n\ntime.sleep(600)\n")
    (tmp_path / "project").mkdir()
    paths = [str(shadow.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    server = subprocess.Popen(
        [sys.executable, "-m", "exportlens.cli", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path / "project",
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(paths)),
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        while (worker := _worker_of(server.pid)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert worker is not None, "no warm worker started while the server imported pygls"
    finally:
        server.kill()
        server.wait()
    if worker is not None:  # it ends with its owner, even while torch still imports (docs/workers.md)
        _, alive = psutil.wait_procs([worker], timeout=30)
        assert not alive


def test_a_warm_worker_whose_owner_dies_while_torch_imports_ends_too(tmp_path: Path):
    """A torch whose import never ends: the worker's owner (here, this test) closes its end of
    the worker's stdin, as a killed server does, and the worker ends without ever finishing
    that import (before, its owner was watched only once torch had imported)."""
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("import time\n\ntime.sleep(600)\n")
    paths = [str(shadow.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = environment(PYTHONPATH=os.pathsep.join(paths))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    worker = subprocess.Popen(
        command(sys.executable, WORKER, "--scratch", str(scratch)),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        time.sleep(1)  # well inside the import that never ends
        assert worker.poll() is None
        worker.stdin.close()
        assert worker.wait(timeout=60) == 0
    finally:
        worker.kill()
        worker.wait()
