"""A module's text never becomes code AOTInductor compiles: torch pastes the message of
`torch._assert_async` into the C++ it generates, unescaped, and a crafted message was compiled
and run by the lowering process, which the seccomp filter did not confine: it made the user's
(fake) key world-readable and back-dated a project file. Real exports, real C++ builds (about
30 s each), through the real CLI with a fake HOME."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from exportlens.exporter.runtime.lowering.aoti import build_aoti, load_aoti
from exportlens.exporter.workers.sandbox import available

REPO = Path(__file__).resolve().parents[2]

# closes the literal, the throw and the conditional it stands in, then calls system()
BREAKOUT = 'x"), 0)); system("chmod 644 {key}; touch -d 2001-01-01 {victim}"); ((("'

CRAFTED = """\
import torch
from torch import nn

MESSAGE = {message!r}


class Crafted(nn.Module):
    def forward(self, x):
        torch._assert_async((x.abs() < 1e9).all(), MESSAGE)
        return x * 2
"""

PYPROJECT = """\
[tool.exportlens.modules."net.py:Crafted"]
inputs = { x = "f32[2, 4]" }
targets = ["aoti"]
"""


@pytest.mark.slow
@pytest.mark.skipif(not available().startswith("landlock"), reason=f"no sandbox here: {available()}")
def test_a_crafted_assert_message_is_not_compiled_into_the_aoti_package(tmp_path: Path):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    project.mkdir()
    key, victim = home / ".ssh" / "id_rsa", project / "victim.py"
    key.write_text("PRIVATE KEY")
    key.chmod(0o600)
    victim.write_text("# the user's work\n")
    message = BREAKOUT.format(key=key, victim=victim)
    (project / "net.py").write_text(CRAFTED.format(message=message))
    (project / "pyproject.toml").write_text(PYPROJECT)
    before = victim.stat().st_mtime_ns
    command = [sys.executable, "-m", "exportlens.cli", "check", str(project), "--no-cache", "--format", "json"]
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO))
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=400)
    (module,) = json.loads(done.stdout)["modules"]
    assert (stat.S_IMODE(key.stat().st_mode), victim.stat().st_mtime_ns) == (0o600, before)
    assert (module["status"], module["findings"]) == ("exported", []), done.stdout + done.stderr
    assert [lowering["status"] for lowering in module["lowerings"]] == ["compiled"]  # the message compiled as text


class Asserts(torch.nn.Module):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def forward(self, x):
        torch._assert_async((x.sum() < 100).all(), self.message)
        return x * 2


@pytest.mark.slow
def test_a_crafted_assert_message_stays_the_message_the_package_raises(tmp_path: Path):
    """Built as a job that is not confined builds it: the package raises the message as written."""
    message = BREAKOUT.format(key=tmp_path / "key", victim=tmp_path / "victim") + ' ??/ \\ "é\n'
    ep = torch.export.export(Asserts(message), (torch.zeros(2, 4),))
    package = load_aoti(build_aoti(ep, tmp_path), tmp_path)
    assert torch.equal(package.run(torch.ones(2, 4)), torch.full((2, 4), 2.0))
    with pytest.raises(RuntimeError) as raised:
        package.run(torch.full((2, 4), 100.0))
    assert str(raised.value) == message
