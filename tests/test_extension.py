"""The VS Code extension, without an editor: its unit tests (node's test runner), and its
manifest against the server it starts (every setting the server reads is contributed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from exportlens.server.settings import camel_keys

EXTENSION = Path(__file__).resolve().parents[1] / "vscode-extension"
MANIFEST = json.loads((EXTENSION / "package.json").read_text())
READY = shutil.which("npm") is not None and (EXTENSION / "node_modules/esbuild").is_dir()


def test_every_server_setting_is_contributed_with_a_description():
    properties = MANIFEST["contributes"]["configuration"]["properties"]
    server = {k for k in camel_keys() if k != "python"}  # `python` is the resolved exportlens.interpreter
    assert {f"exportlens.{k}" for k in server} <= properties.keys()
    assert "exportlens.interpreter" in properties
    for key, p in properties.items():
        assert p.get("markdownDescription"), key
    # Restricted Mode: the folder's own settings may not choose what runs
    trust = MANIFEST["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited" and trust["restrictedConfigurations"] == ["exportlens.interpreter"]


def test_commands_show_only_for_python_files_and_have_no_keybindings():
    contributes = MANIFEST["contributes"]
    assert "keybindings" not in contributes
    palette = {m["command"]: m["when"] for m in contributes["menus"]["commandPalette"]}
    for command in ("exportlens.exportThisModule", "exportlens.showExportedProgram", "exportlens.createExportSpec"):
        assert palette[command] == "editorLangId == python"
    assert all(m["when"] == "editorLangId == python" for m in contributes["menus"]["editor/context"])
    assert {c["command"] for c in contributes["commands"]} == set(palette)


def test_engine_is_no_newer_than_the_editor_the_end_to_end_test_runs():
    # code-server 4.100.3 is VS Code 1.100.3
    major, minor = map(int, re.fullmatch(r"\^(\d+)\.(\d+)\.\d+", MANIFEST["engines"]["vscode"]).groups())
    assert (major, minor) <= (1, 100)


@pytest.mark.skipif(not READY and os.environ.get("CI") != "true", reason="run `npm ci` in vscode-extension/ first (.ci/run does)")
def test_extension_unit_tests_pass():
    done = subprocess.run(["npm", "test", "--silent"], cwd=EXTENSION, capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    passed = int(re.search(r"^# pass (\d+)$", out, re.M).group(1))
    assert passed >= 15 and re.search(r"^# fail 0$", out, re.M), out[-2000:]
