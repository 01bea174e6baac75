"""Every example in docs/diagnostics.md prints what the docs say it prints.

Each "$ exportlens check ." block is run on a project made of the files shown
before it in the same section (a "`net.py`:" label, then its code block)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "diagnostics.md"


def examples() -> list[tuple[int, dict[str, str], str]]:
    lines = DOCS.read_text(encoding="utf-8").splitlines(keepends=True)
    out, files, label, i = [], {}, None, 0
    while i < len(lines):
        if m := re.match(r"^`([\w/.]+)`:\s*$", lines[i]):
            label = m[1]
        elif lines[i].startswith("```") and lines[i].strip() != "```":
            lang, end = lines[i].strip()[3:], lines.index("```\n", i + 1)
            body = "".join(lines[i + 1 : end])
            if lang == "text" and body.startswith("$ exportlens check .\n") and files:
                out.append((i + 1, files, body.split("\n", 1)[1]))
                files = {}
            elif label and lang in ("python", "toml"):
                files[label] = body
            label, i = None, end
        i += 1
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("line", "files", "printed"), examples(), ids=lambda v: str(v) if isinstance(v, int) else "")
def test_the_example_prints_what_the_docs_show(tmp_path, line, files, printed):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "exportlens.cli", "check", "."], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.stdout == printed, f"docs/diagnostics.md:{line}\n{done.stderr}"
