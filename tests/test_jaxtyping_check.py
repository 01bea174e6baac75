"""A module annotated with jaxtyping and no pyproject table, checked as a user does: the CLI
in a real subprocess, real exports; the annotations' names are the dims in what it prints,
and a fix for a dim lands in the annotation (a new size) or in pyproject.toml (a range)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Project, line_of, only

REPO = Path(__file__).resolve().parent.parent

SEQUENCE = """
import torch
from jaxtyping import Float, Int
from torch import Tensor, nn


class Tagger(nn.Module):
    def __init__(self, vocab: int = 100, hidden: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.proj = nn.Linear(hidden, 4)

    def forward(self, x: Float[Tensor, "batch seq 16"], ids: Int[Tensor, "batch seq"]) -> Tensor:
        return self.proj(x + self.embed(ids.clamp(0, 99)))
"""

HEAD = """
from jaxtyping import Float
from torch import Tensor, nn


class Head(nn.Module):
    def forward(self, x: Float[Tensor, "batch 12"]) -> Tensor:
        flat = x[:, :3].reshape(4, 3)
        return flat
"""

VARIADIC = """
from jaxtyping import Float
from torch import Tensor, nn


class Pool(nn.Module):
    def forward(self, x: Float[Tensor, "*batch channels"]) -> Tensor:
        return x.mean(-1)
"""

POSITIONS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Positions(nn.Module):
    def __init__(self, max_len: int = 32):
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, 8))

    def forward(self, x: Float[Tensor, "batch seq 8"]) -> Tensor:
        return x + self.table[: x.shape[1]]
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, subprocess.CompletedProcess[str], dict]:
    project = Project(tmp_path_factory.mktemp("jaxtyping"))
    project.write("pyproject.toml", '[project]\nname = "annotated"\n')  # no [tool.exportlens] at all
    project.write("models/sequence.py", SEQUENCE)
    project.write("models/head.py", HEAD)
    project.write("models/pool.py", VARIADIC)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", str(project.root), "--format", "json", "--no-cache"]
    run = subprocess.run(command, cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    return project, run, {m["target"]: m for m in json.loads(run.stdout)["modules"]}


@pytest.mark.slow
def test_annotated_module_exports_with_its_axis_names_as_dims(checked):
    project, run, modules = checked
    tagger = modules["models/sequence.py:Tagger"]
    assert tagger["status"] == "exported", tagger["findings"]
    assert tagger["spec_source"] == (
        f"models/sequence.py:{line_of(project, 'models/sequence.py', 'def forward')} (forward's jaxtyping annotations)"
    )
    summary = tagger["summary"]
    assert summary["inputs"] == ["x: f32[batch, seq, 16]", "ids: i64[batch, seq]"]
    assert summary["outputs"] == ["f32[batch, seq, 4]"]
    assert summary["range_constraints"] == [
        {"name": "batch", "low": 0, "high": None},
        {"name": "seq", "low": 0, "high": None},
    ]
    assert run.returncode == 1  # the other two modules


@pytest.mark.slow  # alone among its file's quick tests, it would start the file's whole check
def test_code_that_specializes_an_axis_is_reported_on_its_line_in_the_axis_name(checked):
    project, _, modules = checked
    head = modules["models/head.py:Head"]
    assert head["status"] == "failed"
    (finding,) = head["findings"]
    assert finding["code"] == "EL204"
    assert finding["line"] == line_of(project, "models/head.py", "reshape(4")
    assert finding["message"].startswith("`batch` was declared dynamic but was specialized to 4")
    assert finding["related"][0]["line"] == line_of(project, "models/head.py", "def forward")  # the annotation
    static = next(f for f in finding["fixes"] if f["title"].startswith("Make `batch` static: size 4"))
    (edit,) = static["edits"]  # the annotation says so itself: "batch 12" -> "4 12"
    line = project.read("models/head.py").splitlines()[edit["line"] - 1]
    assert (edit["path"], line[edit["column"] - 1 : edit["end_column"] - 1], edit["new_text"]) == (
        "models/head.py",
        "batch",
        "4",
    )


def test_a_variadic_axis_is_a_finding_on_the_annotation_not_a_traceback(checked):
    project, run, modules = checked
    pool = modules["models/pool.py:Pool"]
    assert pool["status"] == "skipped"
    (finding,) = pool["findings"]
    assert finding["code"] == "EL003"
    line = project.read("models/pool.py").splitlines()[finding["line"] - 1]
    assert line[finding["column"] - 1 : finding["end_column"] - 1] == "*batch"
    assert "`*batch` stands for any number of axes" in finding["message"]
    assert "Traceback" not in run.stderr


@pytest.mark.slow  # three in-process checks, each exporting
def test_fixes_for_annotated_dims_export_once_applied(project):
    project.write("pyproject.toml", '[project]\nname = "annotated"\n')
    project.write("models/positions.py", POSITIONS)
    finding = only(project.module("Positions").findings, "EL201")
    assert (
        finding.message == "`seq` is declared as [0, ∞], but this line requires `seq <= 32` (`self.table` has 32 rows)"
    )
    (fix,) = finding.fixes
    assert [e.path for e in fix.edits] == ["pyproject.toml"]  # jaxtyping has no way to say a range
    project.apply(fix)
    assert project.read("pyproject.toml").endswith(
        '[tool.exportlens.modules."models/positions.py:Positions"]\ndims = {seq = {max = 32}}\n'
    )
    report = project.module("Positions")
    assert report.status.value == "exported" and tuple(map(str, report.summary.range_constraints)) == (
        "batch ∈ [0, ∞]",
        "seq ∈ [0, 32]",
    )

    project.write("models/head.py", HEAD)
    static = next(
        f for f in only(project.module("Head").findings, "EL204").fixes if f.title.startswith("Make `batch` static")
    )
    project.apply(static)
    assert 'x: Float[Tensor, "4 12"]' in project.read("models/head.py")
    assert project.module("Head").status.value == "exported"
