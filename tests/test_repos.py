"""The real-repository corpus (issue 35, ``tests/repos/``): each project, copied as a user has
it, gets its specs from ``exportlens init`` (where it has no pyproject.toml of its own), and
``exportlens check`` then says what its ``expected.toml`` says a user should see: the modules
that export, and for each failing one the first finding on the culprit line with its code, and
a preferred fix where a remedy is known. bench/bench_repos.py measures the same corpus."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import tomlkit

CORPUS = Path(__file__).resolve().parent / "repos"


def _projects() -> list:
    """Each project; one whose expected.toml names a known miss is expected to fail, strictly
    (so the day it passes, the miss is struck from the list)."""
    out = []
    for d in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        modules = tomlkit.parse((d / "expected.toml").read_text(encoding="utf-8")).unwrap()["modules"]
        misses = [m["known_miss"] for m in modules.values() if "known_miss" in m]
        marks = [pytest.mark.xfail(strict=True, reason="; ".join(misses))] if misses else []
        out.append(pytest.param(d.name, marks=marks, id=d.name))
    return out


pytestmark = [
    pytest.mark.slow,  # transformers models, init's guesses and a check with proofs, per project
    pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed"),
]


def exportlens(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("exportlens")), *args]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=1200)


@pytest.mark.parametrize("name", _projects())
def test_each_real_repository_is_checked_as_its_expected_toml_says(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    shutil.copytree(CORPUS / name, root, ignore=shutil.ignore_patterns("expected.toml", "__pycache__"))
    (root / ".git").mkdir()
    expected = tomlkit.parse((CORPUS / name / "expected.toml").read_text(encoding="utf-8")).unwrap()["modules"]
    if not (root / "pyproject.toml").exists():
        init = exportlens(root, "init", ".")
        for target in expected:
            said = f"{target}: wrote a spec; "
            assert f"{said}exports" in init.stdout or f"{said}runs" in init.stdout, init.stdout + init.stderr
    done = exportlens(root, "check", ".", "--no-cache", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    modules = {m["target"]: m for m in json.loads(done.stdout)["modules"]}
    for target, want in expected.items():
        got = modules[target]
        if want["exports"]:
            assert got["status"] == "exported" and not got["findings"], got
            continue
        first, culprit = got["findings"][0], want["problems"][0]
        assert (first["path"], first["line"], first["code"]) == (culprit["path"], culprit["line"], culprit["code"])
        assert culprit.get("says", "") in first["message"], first["message"]  # what the user reads, where it matters
        if want.get("remedy"):  # and, where expected.toml names it, the remedy known
            assert any(want.get("fix", "") in f["title"] for f in first["fixes"] if f["preferred"]), first["fixes"]
