"""A project's folder is the project's to fill: a FIFO or a link to /dev/zero named like a
module file is a finding, not a CLI that blocks forever or reads until memory runs out.
(One named pyproject.toml is no project file at all: a project's is a regular file.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def check(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", "--no-cache", "."]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.timeout(90)
def test_a_fifo_or_a_device_named_like_a_module_file_is_el401_on_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.exportlens]\n")
    (tmp_path / "net.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    done = check(tmp_path)
    assert done.stdout.splitlines()[:2] == [
        "fifo.py:1:1: EL401 cannot read file: it is a FIFO, not a regular file",
        "zero.py:1:1: EL401 cannot read file: it is a device, not a regular file",
    ], done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in done.stderr
