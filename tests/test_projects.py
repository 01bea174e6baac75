"""Project boundaries as a user meets them: a folder with its own pyproject.toml is its own
project, checked against its own specs; `exclude`, .gitignore and hidden folders are not
scanned. No module here has a spec that exports, so no test starts torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from exportlens.exporter.find.walk import python_files_under
from exportlens.exporter.spec.pyproject import excludes

REPO = Path(__file__).resolve().parent.parent
NET = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"


def exportlens(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "exportlens.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def outer(tmp_path: Path, exclude: str = '["scratch/"]') -> Path:
    """A project holding a copy of itself with its own pyproject.toml (``inner``), a folder
    it excludes, one git ignores and a hidden one, each with a module of the same name."""
    root = tmp_path / "outer"
    for folder in ("models", "scratch", "gen", ".hidden", "inner/models"):
        (root / folder).mkdir(parents=True)
        (root / folder / "net.py").write_text(NET)
    (root / "pyproject.toml").write_text(f"[tool.exportlens]\nexclude = {exclude}\n")
    (root / ".gitignore").write_text("gen/\n")
    (root / "inner" / "pyproject.toml").write_text(
        '[tool.exportlens.modules."models/net.py:Net"]\ninputs = { x = "q32[batch, 4]" }\n'
    )
    return root


def test_a_nested_project_is_checked_against_its_own_spec_and_skipped_folders_are_not_scanned(tmp_path):
    outer(tmp_path)
    done = exportlens("check", "outer", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        # the inner project's own pyproject.toml is read for its module: not "no example inputs" from the outer's
        "outer/inner/pyproject.toml:2:12: EL002 input 'x': unknown dtype 'q32' in 'q32[batch, 4]'"
        " (known: f64, f32, f16, bf16, i64, i32, i16, i8, u8, bool, b8, c64, c128)",
        'outer/models/net.py:5:7: EL007 Net has no example inputs: add [tool.exportlens.modules."models/net.py:Net"]'
        " to pyproject.toml, or an example_inputs() staticmethod",
        "2 modules: 0 exported, 0 failed, 2 skipped; 2 findings",
    ]


def test_the_inner_project_alone_and_json_paths_from_the_outer_root(tmp_path):
    outer(tmp_path)
    alone = exportlens("check", ".", cwd=tmp_path / "outer" / "inner")
    assert alone.stdout.splitlines()[0].startswith("pyproject.toml:2:12: EL002 input 'x'")
    report = json.loads(exportlens("check", "outer", "--format", "json", cwd=tmp_path).stdout)
    assert sorted(m["target"] for m in report["modules"]) == ["inner/models/net.py:Net", "models/net.py:Net"]


def test_exclude_that_is_not_a_list_is_refused_on_its_line(tmp_path):
    outer(tmp_path, exclude='"scratch/"')
    done = exportlens("check", "outer", cwd=tmp_path)
    assert (
        "outer/pyproject.toml:2:1: EL005 exclude must be a list of gitignore-style globs,"
        ' like exclude = ["vendor/", "**/*_pb2.py"]'
    ) in done.stdout.splitlines()
    assert done.returncode == 1


def test_the_server_s_walk_reaches_nested_projects_but_not_what_is_skipped(tmp_path):
    root = outer(tmp_path)
    found = sorted(p.relative_to(root).as_posix() for p in python_files_under(root, exclude=excludes()))
    assert found == ["inner/models/net.py", "models/net.py"]
    assert sorted(
        p.relative_to(root).as_posix() for p in python_files_under(root, nested=False, exclude=excludes())
    ) == ["models/net.py"]
    # a folder named on the command line is scanned even where a rule above it would skip it
    assert [p.name for p in python_files_under(root / "gen", exclude=excludes())] == ["net.py"]


def test_gitignore_rules_from_the_checkout_top_and_negations(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("*_pb2.py\n")
    (root / "pkg" / "gen").mkdir(parents=True)
    (root / "pkg" / ".gitignore").write_text("gen/*\n!gen/keep.py\n")
    for name in ("pkg/a.py", "pkg/a_pb2.py", "pkg/gen/drop.py", "pkg/gen/keep.py"):
        (root / name).write_text(NET)
    assert sorted(p.relative_to(root).as_posix() for p in python_files_under(root / "pkg", exclude=excludes())) == [
        "pkg/a.py",
        "pkg/gen/keep.py",
    ]


def test_a_bad_exclude_pattern_is_refused_where_it_is_written_and_the_good_ones_still_skip(tmp_path):
    outer(tmp_path, exclude='[\n  "scratch/",\n  "!",\n]')
    done = exportlens("check", "outer", cwd=tmp_path)
    assert (
        "outer/pyproject.toml:4:4: EL005 exclude: '!' is not a gitignore-style glob (Invalid git pattern: '!')"
        in done.stdout.splitlines()
    )
    # the pattern that is wrong makes the walk read no exclude at all: scratch/ is scanned again
    assert "outer/scratch/net.py:5:7: EL007" in done.stdout


def test_the_walk_follows_the_exclude_of_an_unsaved_pyproject_buffer(tmp_path):
    from exportlens.exporter.spec.plan import make_plan

    root = outer(tmp_path, exclude="[]").resolve()
    typed = {root / "pyproject.toml": '[tool.exportlens]\nexclude = ["models/"]\n'}
    saved = sorted(p.module.path for p in make_plan([root], root).modules)
    unsaved = sorted(p.module.path for p in make_plan([root], root, sources=typed).modules)
    assert saved == ["models/net.py", "scratch/net.py"]
    assert unsaved == ["scratch/net.py"]
