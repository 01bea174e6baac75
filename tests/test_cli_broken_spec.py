"""``exportlens check`` on a pyproject.toml broken in every way the editor test types it
(tests/spec_texts.py): a located finding (``pyproject.toml:LINE:COL: ELnnn``) or exit 2, never
a traceback. The project has no model files, so no export runs: the spec is all it reads."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from spec_texts import BROKEN

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "pyproject.toml").read_text()
LOCATED = re.compile(r"^\S*pyproject\.toml:\d+:\d+: EL\d{3} ", re.M)


def broken_texts() -> dict[str, str]:
    out = {}
    for name, (old, new) in BROKEN.items():
        out[name] = SPEC.replace(old, new, 1) if old != "\n" else SPEC.replace(old, new)
    lines = SPEC.splitlines(keepends=True)
    for n in range(1, len(lines), 4):  # cut at a line's end, and inside the next line
        out[f"cut after line {n}"] = "".join(lines[:n])
        out[f"cut inside line {n + 1}"] = "".join(lines[:n]) + lines[n][: len(lines[n]) // 2]
    return out


@pytest.mark.parametrize(("name", "text"), broken_texts().items(), ids=list(broken_texts()))
@pytest.mark.slow
def test_a_broken_spec_is_a_located_finding_or_exit_2(tmp_path, name, text):
    (tmp_path / "pyproject.toml").write_bytes(
        text.encode("utf-8", "surrogatepass")
    )  # a lone surrogate: bytes no UTF-8 reader takes
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-m", "exportlens.cli", "check", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    said = result.stdout + result.stderr
    assert "Traceback" not in said and 'File "' not in said, said
    assert result.returncode in (0, 1, 2), said
    if result.returncode == 1:  # findings: each of the spec's on its line
        assert LOCATED.search(said), said
