"""A real editor: headless Emacs with eglot starts `exportlens serve`, opens an example file
and shows exportlens's diagnostics through flymake, set up as docs/server.md says (Editors);
when eglot shuts the server down,
nothing exportlens started is left running.

Needs `emacs` with eglot (Emacs 29+ has it built in; Debian's Emacs 28: `apt-get install
emacs-nox elpa-eglot`); skipped without them. The Lisp side is tests/e2e/eglot_diagnostics.el.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from .test_neovim import MARK, leftovers, line_of, marked, server_command

SCRIPT = Path(__file__).with_name("eglot_diagnostics.el")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EMACS = shutil.which("emacs")
WAIT_S = 90  # for the verdict: the first export of a session waits for torch to import


def _has_eglot() -> bool:
    if EMACS is None:
        return False
    probe = "(progn (require 'package) (package-initialize) (require 'eglot))"
    try:
        return subprocess.run([EMACS, "--batch", "--eval", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


pytestmark = [
    pytest.mark.slow,  # a real editor: a torch import and an export
    pytest.mark.skipif(not _has_eglot(), reason="Emacs with eglot is not installed (Debian: emacs-nox elpa-eglot)"),
    pytest.mark.timeout(240),
]


def run_emacs(tmp_path: Path, root: Path, rel: str, code: str) -> dict:
    token, out = uuid.uuid4().hex, tmp_path / "eglot-result.json"
    env = {
        **os.environ,
        MARK: token,
        "HOME": str(tmp_path / "emacs-home"),  # no user init, no ~/.emacs.d written
        "EXPORTLENS_EGLOT_ROOT": str(root),
        "EXPORTLENS_EGLOT_FILE": rel,
        "EXPORTLENS_EGLOT_CMD": json.dumps(server_command()),
        "EXPORTLENS_EGLOT_CODE": code,
        "EXPORTLENS_EGLOT_TIMEOUT": str(WAIT_S),
        "EXPORTLENS_EGLOT_OUT": str(out),
    }
    try:
        done = subprocess.run(
            [EMACS, "--batch", "-l", str(SCRIPT)],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT_S + 60,
        )
        left = leftovers(token)
    finally:
        for pid in marked(token):  # ours, by our token: never leave them to the next test
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    context = f"emacs exit {done.returncode}\noutput:\n{done.stdout[-3000:]}{done.stderr[-4000:]}"
    assert out.is_file(), f"the Lisp script wrote no result\n{context}"
    return {**json.loads(out.read_text()), "context": context, "leftovers": left}


def test_eglot_shows_the_data_dependent_branch_on_its_line(tmp_path):
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # eglot's project is the VC root
    result = run_emacs(tmp_path, root.resolve(), "models/router.py", "EL101")
    assert result["found"], f"diagnostics: {result['diagnostics']}\n{result['context']}"
    [d] = [d for d in result["diagnostics"] if "[EL101]" in d["text"]]
    assert d["line"] == line_of(root / "models/router.py", "if routed > 0") + 1  # Emacs counts from 1
    assert d["type"] == "eglot-error"
    assert d["text"].startswith("exportlens [EL101]: `routed > 0` depends on the values inside a tensor"), d
    assert not result["leftovers"], f"processes left after eglot shut the server down: {result['leftovers']}"
