"""What a sandboxed export may read does not depend on the folder exportlens starts in:
`python -m` put that folder on the import path, and every import path entry was readable,
so a module read `~/.ssh/id_rsa` when `exportlens check` ran from $HOME, or from `/`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exportlens.exporter.workers.sandbox import available

SNOOP = """\
from pathlib import Path

import torch


class Snoop(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        try:
            said = "read: " + Path({secret!r}).read_text()
        except OSError as e:
            said = type(e).__name__
        raise RuntimeError(said)
"""


@pytest.mark.skipif(not available().startswith("landlock"), reason=f"no sandbox here: {available()}")
@pytest.mark.parametrize("start_in", ["$HOME", "/"])
@pytest.mark.slow
def test_a_module_cannot_read_the_home_exportlens_was_started_in(tmp_path: Path, start_in: str):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_rsa"
    secret.write_text("PRIVATE KEY")
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    (project / "snoop.py").write_text(SNOOP.format(secret=str(secret)))
    command = [sys.executable, "-m", "exportlens.cli", "check", str(project), "--no-cache", "--format", "json"]
    cwd = home if start_in == "$HOME" else Path("/")
    done = subprocess.run(
        command, cwd=cwd, env=dict(os.environ, HOME=str(home)), capture_output=True, text=True, timeout=300
    )
    (module,) = json.loads(done.stdout)["modules"]
    (finding,) = module["findings"]
    assert "PermissionError" in finding["message"], finding["message"]
    assert "PRIVATE KEY" not in done.stdout + done.stderr


def test_a_model_checked_alone_in_the_home_folder_is_not_exported_there(tmp_path: Path):
    """Its project folder would be the home folder, all of which the sandbox lets a project
    read: EL505 on the class, and the module's code never runs."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_rsa"
    secret.write_text("PRIVATE KEY")
    (home / "snoop.py").write_text(SNOOP.format(secret=str(secret)))
    command = [
        sys.executable,
        "-m",
        "exportlens.cli",
        "check",
        str(home / "snoop.py"),
        "--no-cache",
        "--format",
        "json",
    ]
    done = subprocess.run(
        command, cwd=home, env=dict(os.environ, HOME=str(home)), capture_output=True, text=True, timeout=300
    )
    (module,) = json.loads(done.stdout)["modules"]
    (finding,) = module["findings"]
    assert (finding["code"], finding["line"], module["status"]) == ("EL505", 6, "failed"), finding
    assert "holds your home folder" in finding["message"] and "pyproject.toml" in finding["message"]
    assert "PRIVATE KEY" not in done.stdout + done.stderr and done.returncode == 1
