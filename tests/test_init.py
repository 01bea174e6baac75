"""``exportlens init`` as a new user runs it: three model files (a KV-cache decoder block
with ``start_pos: int``, a top-2 MoE layer, a ViT that interpolates its position
embeddings; tests/data/new_project) and no pyproject.toml. The real CLI, real exports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "tests/data/new_project"


def exportlens(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("new") / "project"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()  # a checkout: its root is the project's
    return root


@pytest.fixture(scope="module")
def dry_run(project: Path) -> subprocess.CompletedProcess[str]:
    return exportlens(project, "init", "--dry-run")


@pytest.fixture(scope="module")
def initialized(project: Path, dry_run) -> subprocess.CompletedProcess[str]:
    return exportlens(project, "init")


@pytest.mark.slow
def test_dry_run_prints_the_diff_and_writes_nothing(project: Path, dry_run) -> None:
    assert dry_run.returncode == 0, dry_run.stderr
    assert "+++ pyproject.toml" in dry_run.stdout
    assert '+[tool.exportlens.modules."models/decoder.py:DecoderBlock"]' in dry_run.stdout
    assert dry_run.stdout.rstrip().endswith("would write 3 specs")
    assert not (project / "pyproject.toml").exists() or "DecoderBlock" not in (project / "pyproject.toml").read_text()


def test_init_writes_a_proven_spec_for_each_model_and_none_for_their_parts(project: Path, initialized) -> None:
    assert initialized.returncode == 0, initialized.stdout + initialized.stderr
    out = initialized.stdout
    assert "models/moe.py:Expert: covered by models/moe.py:MoE, which builds it" in out
    assert "models/vit.py:PatchEmbed: covered by models/vit.py:ViT, which builds it" in out
    assert "models/decoder.py:FeedForward: covered by models/decoder.py:DecoderBlock" in out
    assert "models/vit.py:ViT: wrote a spec; exports" in out
    text = (project / "pyproject.toml").read_text()
    for part in ("Expert", "PatchEmbed", "FeedForward"):
        assert f':{part}"]' not in text
    # the shape from `b, t, d = x.shape` and the first layer; start_pos an int the program takes as a variable
    assert 'inputs = {x = "f32[batch, seq, 64]", start_pos = "int[start_pos]"}' in text
    assert "#   start_pos: a position (annotated `int`): an int the program takes as a variable" in text
    assert (
        "#   x: rank 3 from `b, t, d = x.shape`; last size 32: the input of `self.gate = nn.Linear(dim, n_experts"
        in text
    )
    assert 'inputs = {pixel_values = "f32[batch, 3, 32, 32]"}' in text
    # the cache bounds the dims: batch by max_batch_size, `start_pos + seq` by the cache's max_seq_len positions
    assert "dims = {batch = {min = 1, max = 4}, seq = {min = 2, max = 8}, start_pos = {min = 0, max = 24}}" in text
    assert "#   `seq` up to 8 and `start_pos` up to 24: together they fit the cache of 32 positions" in text


def test_a_second_init_changes_nothing(project: Path, initialized) -> None:
    before = (project / "pyproject.toml").read_bytes()
    again = exportlens(project, "init")
    assert again.returncode == 0
    assert again.stdout.rstrip().endswith("nothing to do")
    assert (project / "pyproject.toml").read_bytes() == before


@pytest.mark.slow
def test_check_then_reports_real_findings_on_their_lines(project: Path, initialized) -> None:
    check = exportlens(project, "check", "--format", "text")
    decoder, moe = project / "models/decoder.py", project / "models/moe.py"
    lines = check.stdout.splitlines()
    assert f"models/moe.py:{line_of(moe, 'if rows.numel() == 0')}:13: EL101 `rows.numel() == 0`" in "\n".join(lines)
    # the sum at the cache's end, which eager runs and the program refuses: the relation, said once
    assert any(
        line.startswith(f"models/decoder.py:{line_of(decoder, 'self.cache_k[:b, : start_pos')}:9: EL206 `seq`")
        and "requires `seq + start_pos <= 31`" in line
        for line in lines
    ), check.stdout
    assert not any(code in check.stdout for code in ("EL403", "EL404", "EL405", "EL001"))  # no finding of a wrong guess
    assert "EL007" not in check.stdout  # the parts (Expert, PatchEmbed, FeedForward) are checked inside their parents
    assert check.returncode == 1


GUESSES = """\
import torch
from torch import nn


class Pool(nn.Module):
    def forward(self, x):
        return x.mean(dim=2)


class Picky(nn.Module):
    def forward(self, x):
        return x + torch.ones(7)
"""


@pytest.mark.slow
def test_the_next_guess_is_tried_where_the_first_cannot_call_the_module(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"  # kept\n')
    (tmp_path / "layers.py").write_text(GUESSES)
    done = exportlens(tmp_path, "init")
    assert "layers.py:Pool: wrote a spec; exports" in done.stdout
    assert "layers.py:Picky: wrote a spec; no guess runs (EL405 at layers.py:12): set the inputs by hand" in done.stdout
    assert done.returncode == 1  # a spec the user must fill in
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "mine"  # kept\n')
    assert 'inputs = {x = "f32[batch, seq, 16]"}' in text.split('"layers.py:Pool"]')[1]
    assert 'inputs = {x = "f32[batch, 16]"}' in text.split('"layers.py:Picky"]')[1]  # the first guess, said to fail


HEAD = """\
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def forward(self, x):
        return self.proj(x)
"""


def in_home(tmp_path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``exportlens init`` with ``tmp_path/home`` as the user's home folder."""
    env = dict(os.environ, PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"))
    command = [sys.executable, "-m", "exportlens.cli", "init", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def home_project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    root = tmp_path / "home" / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "head.py").write_text(HEAD)
    return root


def test_init_writes_through_no_link_to_another_projects_pyproject(tmp_path: Path, home_project: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "other"\n')
    (home_project / "pyproject.toml").symlink_to(other / "pyproject.toml")
    done = in_home(tmp_path, cwd=home_project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "exportlens init: pyproject.toml is a link" in done.stderr
    assert "Traceback" not in done.stderr
    assert (other / "pyproject.toml").read_text() == '[project]\nname = "other"\n'
    assert (home_project / "pyproject.toml").is_symlink()


def test_init_creates_no_file_where_a_dangling_link_points(tmp_path: Path, home_project: Path) -> None:
    (home_project / "net_$(touch owned).py").write_text(HEAD)  # a name bash would run, in a file bash reads
    profile = tmp_path / "home" / ".bash_profile"
    (home_project / "pyproject.toml").symlink_to(profile)
    done = in_home(tmp_path, cwd=home_project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "exportlens init: pyproject.toml is a link" in done.stderr
    assert not profile.exists() and not profile.is_symlink()


@pytest.mark.slow  # an export of the guess, as before the fix, would take seconds
def test_init_writes_no_pyproject_into_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "net.py").write_text(HEAD)  # a model alone in the home folder: `check` says EL505
    done = in_home(tmp_path, "net.py", cwd=home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"exportlens init: the project folder {home} holds your home folder" in done.stderr
    assert not (home / "pyproject.toml").exists()


@pytest.mark.slow  # a real init: its guess exported
def test_a_control_character_in_the_quoted_layer_line_keeps_the_pyproject_valid(tmp_path: Path) -> None:
    import tomllib

    (tmp_path / ".git").mkdir()
    escaped = HEAD.replace("nn.Linear(16, 4)", 'nn.Linear(16, 4, bias="\x1b[0m" != "")')
    (tmp_path / "head.py").write_text(escaped)
    done = exportlens(tmp_path, "init")
    assert "head.py:Head: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert tomllib.loads(text)["tool"]["exportlens"]["modules"]["head.py:Head"]["inputs"] == {"x": "f32[batch, 16]"}
    assert '#   x: last size 16: the input of `self.proj = nn.Linear(16, 4, bias="\\x1b[0m" != "")`' in text


@pytest.mark.slow  # two real models exported
def test_init_builds_real_models_from_their_config_dataclasses(tmp_path: Path) -> None:
    """A nanoGPT-style GPT (``GPTConfig``) and a Llama-style decoder (``ModelArgs``, a
    vocabulary of -1): built from the dataclass, scaled down, and checked for real."""
    import tomllib

    root = tmp_path / "project"
    shutil.copytree(REPO / "tests/data/real_models", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()
    done = exportlens(root, "init")
    out = done.stdout
    assert "models/gpt.py:GPT: wrote a spec; exports" in out, out + done.stderr
    assert "models/llama.py:Transformer: wrote a spec; exports" in out  # seq and start_pos fit the cache together
    assert "no guess runs" not in out and done.returncode == 0
    modules = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["exportlens"]["modules"]
    gpt = modules["models/gpt.py:GPT"]
    assert gpt["init"]["config"]["call"] == "models/gpt.py:GPTConfig"
    assert gpt["inputs"] == {"idx": {"shape": "i64[batch, seq]", "low": 0, "high": 1000}}  # targets=None kept
    assert gpt["dims"]["seq"] == {"min": 2, "max": 128}  # the scaled block_size bounds the sequence
    args = modules["models/llama.py:Transformer"]["init"]["params"]["kwargs"]
    assert args == {
        "dim": 64,
        "n_layers": 2,
        "n_heads": 4,
        "vocab_size": 1000,
        "max_batch_size": 4,
        "max_seq_len": 128,
    }
    assert "scaled down: dim 4096 -> 64, n_layers 32 -> 2" in (root / "pyproject.toml").read_text()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert all(line in readme for line in out.splitlines()), "README's init example: regenerate it"


FACTORY = """\
from torch import nn


class Classifier(nn.Module):
    def __init__(self, hidden: int, classes: int):
        super().__init__()
        self.body = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x).relu())


def build_classifier(hidden_size=4096, classes=10):
    model = Classifier(hidden_size, classes)
    return model


def helper(x):
    return x
"""


@pytest.mark.slow  # real exports of a class and of its factory
def test_init_checks_a_factory_that_returns_a_module(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "net.py").write_text(FACTORY)
    done = exportlens(tmp_path, "init")
    assert "net.py:build_classifier: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    assert "net.py:Classifier: wrote a spec; exports" in done.stdout  # required sizes guessed from their names
    assert "helper" not in done.stdout and done.returncode == 0
    text = (tmp_path / "pyproject.toml").read_text()
    table = text.split('"net.py:build_classifier"]')[1]
    assert 'factory = "net.py:build_classifier"\ninit = {hidden_size = 64, classes = 10}' in table
    assert "#   factory: build_classifier() builds Classifier" in table
    assert "#   init hidden_size 4096 -> 64 (scaled down)" in table
