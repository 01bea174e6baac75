"""Text a module controls (its exception messages, its submodules' and classes' names) and
the project's file names reach a terminal or a CI log only escaped: no ESC byte (OSC 52
would set the clipboard, OSC 0 the window title, CSI 2J clear the screen) and no line that
begins with ``::`` (GitHub's runner would read it as a workflow command). ``exportlens``
runs for real, in a subprocess, with a HOME of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[4]" }\n'

# what a hostile module says, as Python source: a clipboard write, a window title, a cleared
# screen, then a workflow command on a line of its own; the output shows it as written here
ESCAPES = "\\x1b]52;c;c2VjcmV0\\x07\\x1b]0;owned\\x07\\x1b[2J"
HOSTILE = SHOWN = ESCAPES + "\\n::error::x"

# the exception's class name and its message (whose first line a finding quotes)
RAISES = f"""
from torch import nn

Boom = type("Boom{HOSTILE}", (RuntimeError,), {{}})


class Net(nn.Module):
    def forward(self, x):
        raise Boom("boom {HOSTILE}")
"""

# a submodule whose attribute name and class name carry the same text, and which fails to export
NAMED = f"""
import torch
from torch import nn

Evil = type("Evil{HOSTILE}", (nn.Module,), {{"forward": lambda self, x: x * 2 if x.sum() > 0 else x}})


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("::add-mask::{HOSTILE}", Evil())

    def forward(self, x):
        return list(self.children())[0](x)
"""

NEWLINE_NAME = "a\n::warning file=x.py::forged.py"  # a file name that starts a workflow command
BROKEN = "def f(:\n"


def run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", *args]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=240)
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")
    return done


def project(tmp_path: Path, net: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "net.py").write_text(net)
    return root


def assert_safe(out: bytes) -> list[str]:
    """No ESC byte, no other control character but the newline, no line a runner reads as a command."""
    text = out.decode("utf-8")
    assert "\x1b" not in text
    lines = text.splitlines()
    assert all(line.isprintable() for line in lines), [line for line in lines if not line.isprintable()]
    assert not [line for line in lines if line.lstrip().startswith("::")]
    return lines


@pytest.mark.slow
def test_check_prints_an_exception_message_escaped(tmp_path):
    root = project(tmp_path, RAISES)
    done = run(root, "check", "--jobs", "1", ".")
    lines = assert_safe(done.stdout)
    (finding,) = [line for line in lines if line.startswith("net.py:")]
    assert f"EL405 forward raised Boom{SHOWN} on the example inputs" in finding
    assert finding.endswith(f"boom {ESCAPES}")  # a message's first line


def test_check_prints_a_file_name_with_a_newline_escaped(tmp_path):
    root = project(tmp_path, "x = 1\n")
    (root / NEWLINE_NAME).write_text(BROKEN)
    done = run(root, "check", "--jobs", "1", ".")
    lines = assert_safe(done.stdout)
    assert lines[0] == "a\\n::warning file=x.py::forged.py:1:7: EL401 syntax error: invalid syntax"


def test_check_prints_a_file_name_starting_a_workflow_command_escaped(tmp_path):
    root = project(tmp_path, "x = 1\n")
    (root / "::error::x.py").write_text(BROKEN)
    done = run(root, "check", "--jobs", "1", ".")
    lines = assert_safe(done.stdout)
    assert lines[0] == "\\x3a:error::x.py:1:7: EL401 syntax error: invalid syntax"


@pytest.mark.slow
def test_tree_prints_submodule_and_class_names_escaped(tmp_path):
    root = project(tmp_path, NAMED)
    done = run(root, "tree", "net.py:Net")
    lines = assert_safe(done.stdout)
    fix_first = lines[lines.index("smallest failing submodule (fix this first):") + 1]
    assert fix_first.startswith(f"  \\x3a:add-mask::{SHOWN} (Evil{SHOWN}): net.py:")


def test_sarif_percent_encodes_a_file_name_with_a_newline(tmp_path):
    root = project(tmp_path, "x = 1\n")
    (root / NEWLINE_NAME).write_text(BROKEN)
    done = run(root, "check", "--format", "sarif", "--jobs", "1", ".")
    (result,) = [r for r in json.loads(done.stdout)["runs"][0]["results"] if r["ruleId"] == "EL401"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "a%0A%3A%3Awarning%20file%3Dx.py%3A%3Aforged.py", "uriBaseId": "%SRCROOT%"}


def test_github_escapes_a_file_name_with_a_newline(tmp_path):
    root = project(tmp_path, "x = 1\n")
    (root / NEWLINE_NAME).write_text(BROKEN)
    done = run(root, "check", "--format", "github", "--jobs", "1", ".")
    lines = done.stdout.decode().splitlines()
    assert lines[0] == (
        "::error file=a%0A%3A%3Awarning file=x.py%3A%3Aforged.py,line=1,col=7,endLine=1,title=EL401"
        "::syntax error: invalid syntax"
    )


# a line of the user's code that `show` quotes beside the node it made, a raw ESC in its comment
QUOTED = """
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return x * 2  # \x1b]0;owned\x07 ::error::x
"""


@pytest.mark.slow
def test_show_prints_the_quoted_source_line_escaped(tmp_path):
    root = project(tmp_path, QUOTED)
    done = run(root, "show", "net.py:Net")
    assert done.returncode == 0, done.stderr
    lines = assert_safe(done.stdout)
    assert [line for line in lines if line.endswith("return x * 2  # \\x1b]0;owned\\x07 ::error::x")]
