"""Of /dev, a sandboxed export reads only what Python and torch read (docs/workers.md, "The
sandbox"): the whole of /dev was readable, so a module read a mode-600 file another process
of the user's left in /dev/shm, and the input being typed into another terminal (a pty, with a
password typed into it). Through the real CLI; the module says in its finding what it read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from exportlens.exporter.workers.sandbox import available

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not available().startswith("landlock"), reason=f"no sandbox here: {available()}")

READER = """\
import os

import torch


def attempt(name, path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            return f"{{name}}: read {{os.read(fd, 100)!r}}"
        finally:
            os.close(fd)
    except OSError as e:
        return f"{{name}}: {{type(e).__name__}}"


class Reader(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        said = [attempt("shm", {shm!r}), attempt("pty", {pty!r}), attempt("urandom", "/dev/urandom")]
        raise RuntimeError("; ".join(said))
"""


@pytest.fixture
def secrets():
    """A mode-600 file in /dev/shm and a terminal with a password typed into it, both the test's own."""
    shm = Path("/dev/shm") / f"exportlens-test-{uuid.uuid4().hex}"
    shm.write_text("SHARED SECRET")
    shm.chmod(0o600)
    master, slave = os.openpty()
    os.write(master, b"hunter2\n")  # typed: input waiting on the terminal's side a program reads
    try:
        yield shm, os.ttyname(slave)
    finally:
        shm.unlink()
        os.close(master)
        os.close(slave)


@pytest.mark.slow
def test_a_module_cannot_read_shared_memory_or_another_terminal(tmp_path: Path, secrets):
    shm, pty = secrets
    (tmp_path / "pyproject.toml").write_text("[tool.exportlens]\n")
    (tmp_path / "reader.py").write_text(READER.format(shm=str(shm), pty=pty))
    command = [sys.executable, "-m", "exportlens.cli", "check", str(tmp_path), "--no-cache", "--format", "json"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    (module,) = json.loads(done.stdout)["modules"]
    (finding,) = module["findings"]
    said = dict(re.findall(r"(shm|pty|urandom): (PermissionError|read b)", finding["message"]))
    assert said["shm"] == said["pty"] == "PermissionError", finding["message"]
    assert said["urandom"] == "read b", finding["message"]  # what torch and Python read stays readable
    assert "SHARED SECRET" not in done.stdout + done.stderr
    assert "hunter2" not in done.stdout + done.stderr
