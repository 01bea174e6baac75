"""``exportlens record -- COMMAND`` as a user runs it: a tiny project with two module classes
and a script that calls them with batch sizes 2 and 5 and a fixed feature size. The real
CLI, the real command in a real subprocess (confined where this kernel confines), real exports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

from exportlens.exporter.workers.sandbox import off_here
from exportlens.record import _read

REPO = Path(__file__).resolve().parent.parent

MODELS = """\
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, features: int, hidden: int = 16):
        super().__init__()
        self.proj = nn.Linear(features, hidden)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Head(nn.Module):
    def __init__(self, hidden: int, classes: int):
        super().__init__()
        self.out = nn.Linear(hidden, classes)

    def forward(self, h, scale: float = 1.0):
        return self.out(h) * scale
"""

SCRIPT = """\
import torch
from models import Encoder, Head

encoder, head = Encoder(8, hidden=32), Head(32, classes=3)
for batch in (2, 5, 5, 2):
    y = head(encoder(torch.randn(batch, 8)), scale=0.5)
print("trained", tuple(y.shape))
"""


def exportlens(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def make_project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)  # a checkout: its root is the project's
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("record") / "project", {"models.py": MODELS, "script.py": SCRIPT})


@pytest.fixture(scope="module")
def recorded(project: Path) -> subprocess.CompletedProcess[str]:
    return exportlens(project, "record", "--", sys.executable, "script.py")


def modules(project: Path) -> dict:
    return tomlkit.parse((project / "pyproject.toml").read_text()).unwrap()["tool"]["exportlens"]["modules"]


@pytest.mark.slow
def test_record_writes_the_batch_as_a_dim_and_keeps_the_features_and_the_constructor(project: Path, recorded) -> None:
    assert recorded.returncode == 0, recorded.stderr
    assert "trained (2, 3)" in recorded.stdout  # the command ran as it would have, its output shown
    assert "wrote 2 specs" in recorded.stdout
    tables = modules(project)
    assert tables["models.py:Encoder"] == {
        "init": {"features": 8, "hidden": 32},
        "inputs": {"x": "f32[batch, 8]"},
        "dims": {"batch": {"min": 2, "max": 5}},
    }
    assert tables["models.py:Head"] == {
        "init": {"hidden": 32, "classes": 3},
        "inputs": {"h": "f32[batch, 32]", "scale": 0.5},
        "dims": {"batch": {"min": 2, "max": 5}},
    }


def test_each_table_says_which_command_it_was_recorded_from(project: Path, recorded) -> None:
    text = (project / "pyproject.toml").read_text()
    assert text.count(f"# recorded from: {sys.executable} script.py, 4 calls") == 2


def test_a_second_record_changes_nothing(project: Path, recorded) -> None:
    before = (project / "pyproject.toml").read_bytes()
    again = exportlens(project, "record", "--", sys.executable, "script.py")
    assert again.returncode == 0, again.stderr
    assert "nothing to record" in again.stdout
    assert "trained" not in again.stdout  # nothing to watch: the command is not run again
    assert (project / "pyproject.toml").read_bytes() == before


@pytest.mark.slow  # two real exports
def test_the_recorded_specs_export(project: Path, recorded) -> None:
    import json

    checked = exportlens(project, "check", "--format", "json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    statuses = {m["target"]: m["status"] for m in json.loads(checked.stdout)["modules"]}
    assert statuses == {"models.py:Encoder": "exported", "models.py:Head": "exported"}


EMBED = """\
import torch
from torch import nn


class Tokens(nn.Module):
    def __init__(self, vocab: int, width: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)

    def forward(self, ids):
        return self.embed(ids).mean(1)
"""

WRITER = """\
import torch
from tokens import Tokens

model = Tokens(vocab=50, width=4)
for batch, seq in ((2, 7), (3, 9)):
    ids = torch.full((batch, seq), 5)
    ids[0, 0], ids[-1, -1] = 3, 39  # the least and the most id the run gives
    model(ids)
open("checkpoint.pt", "w").write("weights")
"""


@pytest.mark.skipif(off_here() is not None, reason=f"no sandbox here: {off_here()}")
@pytest.mark.slow
def test_the_command_runs_confined_unless_told_not_to(tmp_path: Path) -> None:
    root = make_project(tmp_path / "tokens", {"tokens.py": EMBED, "train.py": WRITER})
    confined = exportlens(root, "record", "--dry-run", "--", sys.executable, "train.py")
    assert confined.returncode == 1
    assert "PermissionError" in confined.stderr and "--no-sandbox" in confined.stderr
    assert not (root / "checkpoint.pt").exists()
    # what it called before it failed is still recorded: the range of the ids, two dims
    assert '+inputs = {ids = {shape = "i64[batch, seq]", low = 3, high = 40}}' in confined.stdout
    assert "+dims = {batch = {min = 2, max = 3}, seq = {min = 7, max = 9}}" in confined.stdout
    assert not (root / "pyproject.toml").exists()  # --dry-run
    free = exportlens(root, "record", "--no-sandbox", "--", sys.executable, "train.py")
    assert free.returncode == 0, free.stderr
    assert (root / "checkpoint.pt").read_text() == "weights"
    assert modules(root)["tokens.py:Tokens"]["init"] == {"vocab": 50, "width": 4}


def test_record_without_a_command_says_how_to_give_one(project: Path) -> None:
    done = exportlens(project, "record")
    assert done.returncode == 2
    assert "exportlens record -- python train.py" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_recording_the_command_mangled_is_left_out_and_said(tmp_path: Path, capsys) -> None:
    (tmp_path / "1.json").write_text("not json")
    (tmp_path / "2.json").write_text('{"$type": "Recording", "records": {"$tuple": [{"$type": "Recorded"}]}}')
    (tmp_path / "3.json").write_text('{"$type": "Recording", "records": "xyz"}')
    assert _read(tmp_path) == {}
    assert capsys.readouterr().err.count("unreadable, left out") == 2


EXPORTS = """\
import torch
from models import Encoder

encoder = Encoder(8)
encoder(torch.randn(3, 8))
torch.export.export(encoder, (torch.randn(6, 8),), dynamic_shapes=({0: torch.export.Dim("b")},))
encoder(torch.randn(5, 8))
"""


@pytest.mark.slow  # the script exports
def test_the_calls_torch_export_makes_in_the_run_are_not_recorded(tmp_path: Path) -> None:
    root = make_project(tmp_path / "exports", {"models.py": MODELS, "run.py": EXPORTS})
    done = exportlens(root, "record", "--", sys.executable, "run.py")
    assert done.returncode == 0, done.stderr
    assert modules(root)["models.py:Encoder"]["dims"] == {"batch": {"min": 3, "max": 5}}  # not the traced 6


@pytest.mark.slow
def test_a_sitecustomize_of_the_users_still_runs_and_the_run_is_recorded(tmp_path: Path) -> None:
    script = SCRIPT + "import builtins\nprint('set up:', getattr(builtins, 'SET_UP', False))\n"
    root = make_project(tmp_path / "site", {"models.py": MODELS, "script.py": script})
    (root / "env").mkdir()  # in the project: the sandbox reads the project, the interpreter and the system
    (root / "env/sitecustomize.py").write_text("import builtins\nbuiltins.SET_UP = True\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "env"), str(REPO)]))
    command = [sys.executable, "-m", "exportlens.cli", "record", "--dry-run", "--", sys.executable, "script.py"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "set up: True" in done.stdout  # the environment's own sitecustomize ran in the script
    assert "+dims = {batch = {min = 2, max = 5}}" in done.stdout
