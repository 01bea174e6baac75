"""`exportlens export` saves its program where a project may have planted a link: the link is
replaced by the program, never written through (it could lead to ~/.bashrc or another
project's file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x * 2

    @staticmethod
    def example_inputs():
        return (torch.ones(2, 3),)
"""


@pytest.mark.slow  # a whole CLI export that starts torch
def test_export_replaces_a_link_planted_at_the_programs_name(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "net.py").write_text(MODEL)
    victim = tmp_path / "bashrc"
    victim.write_text("alias ls='ls --color'\n")
    (project / "Net.pt2").symlink_to(victim)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-m", "exportlens.cli", "export", "net.py:Net"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "alias ls='ls --color'\n"
    saved = project / "Net.pt2"
    assert not saved.is_symlink() and saved.stat().st_size > 0
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".Net.pt2")) == []
