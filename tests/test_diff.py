"""`exportlens diff` (issue 39): what changed in each module's exported contract, between two
saved reports, a git ref and the working tree, or two interpreters; each change on its line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, line_of

from exportlens.exporter.core.contract import contracts
from exportlens.exporter.core.contract_diff import ChangeKind, diff
from exportlens.exporter.core.report import Report, from_dict

EXPORTLENS = str(Path(sys.executable).with_name("exportlens"))
REPO = Path(__file__).resolve().parent.parent
TORCH_215 = Path.home() / ".cache" / "exportlens" / "torch-2.15.0" / "bin" / "python"
ALL_KINDS = ",".join(k.value for k in ChangeKind)

PYPROJECT = """
    [tool.exportlens.modules."contracted.py:Contracted"]
    inputs = { x = "f32[batch, 8]", y = "f32[batch, ?]", z = "f32[?, 4]" }
    dims = { batch = { min = 2, max = 128 } }
"""
CONTRACTED = """
    import torch
    from torch import nn


    class Contracted(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x, y, z):
            h = self.proj(x)
            s = y * 2
            torch._check(z.shape[0] >= 0)
            return h * 2, s, z * 2
"""
# one line makes y's open size static (broadcast with h), one adds a guard on z's
EDITS = (("s = y * 2", "s = y * h"), ("torch._check(z.shape[0] >= 0)", "torch._check(z.shape[0] <= 64)"))


def exportlens(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXPORTLENS, *argv], cwd=cwd, capture_output=True, text=True, timeout=600)


def edit(project: Project) -> None:
    text = project.read("contracted.py")
    for old, new in EDITS:
        text = text.replace(old, new)
    (project.root / "contracted.py").write_text(text, encoding="utf-8")


def saved(project: Project, name: str) -> None:
    done = exportlens(project.root, "check", ".", "--no-cache", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    (project.root / name).write_text(done.stdout, encoding="utf-8")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The module's report before and after the two edits: old.json, new.json."""
    project = Project(tmp_path_factory.mktemp("contracted"))
    project.write("pyproject.toml", PYPROJECT)
    project.write("contracted.py", CONTRACTED)
    saved(project, "old.json")
    edit(project)
    saved(project, "new.json")
    return project


def expected_lines(project: Project) -> tuple[int, int]:
    return line_of(project, "contracted.py", "s = y * h"), line_of(project, "contracted.py", "z.shape[0] <= 64")


@pytest.mark.slow
def test_a_dim_made_static_and_a_new_guard_are_the_two_changes_on_their_lines(reports):
    static, guard = expected_lines(reports)
    done = exportlens(reports.root, "diff", "old.json", "new.json")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "contracted.py:Contracted\n"
        f"  contracted.py:{static}: specialization: y.shape[1] became static: y.shape[1] == 8\n"
        f"  contracted.py:{guard}: new-guard: new guard: z.shape[0] <= 64 (range z.shape[0]: [2, ∞] → [2, 64])\n"
        "2 changes in 1 of 1 modules compared\n"
    )
    back = exportlens(reports.root, "diff", "new.json", "old.json").stdout.splitlines()  # the edits undone
    assert back[1:3] == [
        f"  contracted.py:{static}: removed-guard: y.shape[1] is no longer static (was y.shape[1] == 8)",
        f"  contracted.py:{guard}: removed-guard: guard removed: z.shape[0] <= 64 (range z.shape[0]: [2, 64] → [2, ∞])",
    ]


@pytest.mark.slow
def test_the_same_two_changes_as_json_and_as_github_annotations(reports):
    static, guard = expected_lines(reports)
    done = exportlens(reports.root, "diff", "old.json", "new.json", "--format", "json")
    assert json.loads(done.stdout) == {
        "schema": "1.0",
        "compared": 1,
        "changes": [
            {
                "target": "contracted.py:Contracted",
                "kind": "specialization",
                "message": "y.shape[1] became static: y.shape[1] == 8",
                "path": "contracted.py",
                "line": static,
            },
            {
                "target": "contracted.py:Contracted",
                "kind": "new-guard",
                "message": "new guard: z.shape[0] <= 64 (range z.shape[0]: [2, ∞] → [2, 64])",
                "path": "contracted.py",
                "line": guard,
            },
        ],
        "ops_unknown": [],
    }
    done = exportlens(reports.root, "diff", "old.json", "new.json", "--format", "github", "--fail-on", "specialization")
    assert done.returncode == 1  # a selected kind occurred
    title = "title=exportlens diff%3A {} in contracted.py%3AContracted"
    assert done.stdout.splitlines() == [
        f"::error file=contracted.py,line={static},{title.format('specialization')}::"
        "y.shape[1] became static: y.shape[1] == 8",
        f"::warning file=contracted.py,line={guard},{title.format('new-guard')}::"
        "new guard: z.shape[0] <= 64 (range z.shape[0]: [2, ∞] → [2, 64])",
        "2 changes in 1 of 1 modules compared",
    ]
    assert exportlens(reports.root, "diff", "old.json", "new.json", "--fail-on", "op-set,lowering").returncode == 0
    sarif = json.loads(exportlens(reports.root, "diff", "old.json", "new.json", "--format", "sarif").stdout)
    places = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]]
    assert places == [static, guard]


@pytest.mark.slow
def test_base_diffs_a_git_ref_against_the_working_tree(tmp_path):
    project = Project(tmp_path)
    project.write("pyproject.toml", PYPROJECT)
    project.write("contracted.py", CONTRACTED)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, *argv], cwd=tmp_path, check=True, capture_output=True)
    edit(project)
    done = exportlens(tmp_path, "diff", "--base", "HEAD", "--format", "json", "--fail-on", "new-guard")
    assert done.returncode == 1, done.stderr
    static, guard = expected_lines(project)
    changes = [(c["kind"], c["line"]) for c in json.loads(done.stdout)["changes"]]
    assert changes == [("specialization", static), ("new-guard", guard)]
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert len(worktrees.splitlines()) == 1, worktrees  # the base's worktree is gone
    project.write(
        "added/more.py",
        "from torch import nn\n\n\nclass More(nn.Module):\n    def forward(self, x):\n        return x + 1\n",
    )
    project.write(
        "pyproject.toml", PYPROJECT + '[tool.exportlens.modules."added/more.py:More"]\ninputs = { x = "f32[4]" }\n'
    )
    done = exportlens(tmp_path, "diff", "--base", "HEAD", "added", "--fail-on", "module-added")
    assert (done.returncode, done.stdout) == (
        1,
        "added/more.py:More\n  added/more.py: module-added: new module (exported)\n"
        "1 change in 1 of 1 modules compared\n",
    ), done.stderr
    outside = exportlens(tmp_path, "diff", "--base", "HEAD", str(tmp_path.parent))
    assert outside.returncode == 2 and "is not inside the current folder" in outside.stderr
    refused = exportlens(tmp_path, "diff", "--base", "no-such-ref")
    assert refused.returncode == 2 and refused.stderr == "exportlens diff: --base: 'no-such-ref' names no commit here\n"


@pytest.mark.slow
def test_the_examples_against_themselves_report_no_change(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns(".exportlens"))
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "examples"]):
        subprocess.run([*git, *argv], cwd=tmp_path, check=True, capture_output=True)
    done = exportlens(tmp_path, "diff", "--base", "HEAD", "examples", "--fail-on", ALL_KINDS)
    assert (done.returncode, done.stdout, done.stderr) == (0, "no change in 5 modules compared\n", "")


def report(ops: list[str] | None, lowered: str = "compiled") -> Report:
    summary: dict[str, Any] = {"signature": "(x: f32[n]) -> f32[n]", "inputs": ["x: f32[n]"], "outputs": ["f32[n]"]}
    summary |= {"range_constraints": [{"name": "n", "low": 2, "high": 64}], "equalities": []}
    summary |= {} if ops is None else {"ops": ops}
    lowering = {"target": "onnx", "status": lowered}
    module = {"target": "m.py:M", "status": "exported", "summary": summary, "lowerings": [lowering]}
    return from_dict(Report, {"modules": [module]})


def test_an_operator_added_or_removed_is_a_change_and_an_older_report_says_unknown():
    old, new = report(["aten.mul.Tensor", "aten.relu"]), report(["aten.mul.Tensor", "aten.nonzero"], "failed")
    said = [(c.kind, c.message) for c in diff(contracts(old), contracts(new)).changes]
    assert said == [
        (ChangeKind.OP_SET, "calls aten.nonzero"),
        (ChangeKind.OP_SET, "no longer calls aten.relu"),
        (ChangeKind.LOWERING, "onnx: compiled → failed"),
    ]
    before = diff(contracts(report(None)), contracts(new))  # a report from before schema 2.3: no operator set
    assert [c.kind for c in before.changes] == [ChangeKind.LOWERING] and before.ops_unknown == ("m.py:M",)


def test_an_unknown_change_kind_or_report_is_refused_in_one_line(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps({"schema": "2.3", "modules": []}), encoding="utf-8")
    done = exportlens(tmp_path, "diff", "r.json", "r.json", "--fail-on", "specialization,bogus")
    assert done.returncode == 2 and "--fail-on: no change is called 'bogus' (the kinds: module-added," in done.stderr
    done = exportlens(tmp_path, "diff", "r.json", "missing.json")
    assert (done.returncode, done.stderr) == (
        2,
        "exportlens diff: cannot read missing.json: No such file or directory\n",
    )
    assert exportlens(tmp_path, "diff", "r.json").returncode == 2
    assert "Traceback" not in done.stderr


ROWS = """
    import torch
    from torch import nn


    class Rows(nn.Module):
        @staticmethod
        def example_inputs():
            return (torch.randn(4, 6), torch.tensor([[True, False] * 3] * 4))

        def forward(self, x, keep):
            chosen = x[keep]
            return chosen.view(4, -1)
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not TORCH_215.exists(), reason=f"no torch 2.15 venv at {TORCH_215} (bench/torch_matrix.py makes it)"
)
def test_two_torch_versions_diffed_through_two_interpreters(tmp_path):
    """torch 2.13 keeps the rows' divisibility as a runtime assertion of the program; 2.15 does not."""
    project = Project(tmp_path)
    project.write("pyproject.toml", "[project]\nname = 'rows'\n")
    project.write("rows.py", ROWS)
    done = exportlens(tmp_path, "diff", "--python", str(TORCH_215), "--format", "json", "--fail-on", "new-guard")
    assert done.returncode == 1, done.stderr
    view = line_of(project, "rows.py", "chosen.view(4, -1)")
    assert json.loads(done.stdout)["changes"] == [
        {
            "target": "rows.py:Rows",
            "kind": "new-guard",
            "message": "new runtime assertion: chosen.shape[0] == 4*((chosen.shape[0]//4))",
            "path": "rows.py",
            "line": view,
        }
    ]
