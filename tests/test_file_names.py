"""A file whose name is not UTF-8 (byte 0xff) among good module files: it is reported on a
readable form of its name (EL401) and every other file is checked, by ``exportlens check``
(a subprocess, twice: the second answer comes from the index cache) and by the editor's index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOOD = "from torch import nn\n\n\nclass Good(nn.Module):\n    def forward(self, x):\n        return x\n"
BAD_NAME = os.fsdecode(b"bad\xff.py")  # as Python names it: the byte as a lone surrogate


def tree(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "good.py").write_text(GOOD)
    (root / BAD_NAME).write_text(GOOD.replace("Good", "Hidden"))
    (root / "later.py").write_text(GOOD.replace("Good", "Later"))
    return root


def check(root: Path, *args: str) -> str:
    env = dict(os.environ, HOME=str(root.parent), XDG_CACHE_HOME=str(root.parent / ".cache"), PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", *args, "--jobs", "1", str(root)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=240)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done.stdout


NAME_FINDING = {
    "code": "EL401",
    "kind": "import-error",
    "message": "file name is not valid UTF-8 (byte 0xff): the file is not read; rename it to check it",
    "path": "bad\\xff.py",
    "line": 1,
    "column": 1,
    "end_line": None,
    "end_column": None,
    "severity": "error",
    "fixes": [],
    "related": [],
    "detail": "",
    "dims": [],
    "cause": "none",
}


def test_check_reports_a_file_name_that_is_not_utf8_and_checks_the_rest(tmp_path):
    root = tree(tmp_path / "project")
    ids = set()
    for _ in range(2):  # the second answer is the one kept in the index cache
        out = json.loads(check(root, "--format", "json"))
        assert [(m["target"], m["status"]) for m in out["modules"]] == [
            ("good.py:Good", "skipped"),
            ("later.py:Later", "skipped"),
        ]
        ids |= {f.pop("id") for f in out["findings"]}
        assert out["findings"] == [NAME_FINDING]
    assert len(ids) == 1  # the same finding, fresh or from the cache
    assert check(root).splitlines()[0] == f"bad\\xff.py:1:1: EL401 {NAME_FINDING['message']}"
