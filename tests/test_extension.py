"""The VS Code extension, without an editor: its unit tests (node's test runner), and its
manifest and sources against the server it starts: every setting as core.settings declares
it, every method name as the server registers it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from exportlens.exporter.core.settings import EDITOR, PROJECT, SERVER, SETTINGS, editor_schema
from exportlens.server import methods
from exportlens.server.app import build
from exportlens.server.settings import camel_keys

EXTENSION = Path(__file__).resolve().parents[1] / "vscode-extension"
MANIFEST = json.loads((EXTENSION / "package.json").read_text())
SOURCES = {p.name: p.read_text() for p in sorted((EXTENSION / "src").glob("*.ts"))}
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


@pytest.mark.skipif(
    not READY and os.environ.get("CI") != "true", reason="run `npm ci` in vscode-extension/ first (.ci/run does)"
)
def test_extension_unit_tests_pass():
    done = subprocess.run(
        ["npm", "test", "--silent"], cwd=EXTENSION, capture_output=True, text=True, timeout=300, check=False
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    passed = int(re.search(r"^# pass (\d+)$", out, re.M).group(1))
    assert passed >= 15 and re.search(r"^# fail 0$", out, re.M), out[-2000:]


def test_every_editor_setting_is_contributed_as_core_settings_declares_it():
    properties = MANIFEST["contributes"]["configuration"]["properties"]
    declared = {f"exportlens.{s.editor_key}": s for s in SETTINGS if EDITOR in s.where}
    assert declared.keys() == properties.keys()
    for key, s in declared.items():
        p, schema = properties[key], editor_schema(s)
        assert {k: v for k, v in p.items() if k not in ("markdownDescription", "enumDescriptions")} == schema, key
        # the description's key facts: the declared help, what null means, one line per choice
        assert p["markdownDescription"].startswith(s.help), key
        if PROJECT in s.where:
            shown = (
                f"{s.default:g}" if s.kind is float else f"`{str(s.default).lower() if s.kind is bool else s.default}`"
            )
            assert "`null`" in p["markdownDescription"] and f"else {shown}." in p["markdownDescription"], key
        assert len(p.get("enumDescriptions", schema.get("enum", []))) == len(schema.get("enum", [])), key


def _ts_list(name: str) -> list[str]:
    text = SOURCES["settings.ts"]
    found = re.search(rf"export const {name} = \[(.*?)\] as const;", text, re.S) or re.search(
        rf"export const {name} = '([^']*)';", text
    )
    return re.findall(r"'([^']*)'", found.group(1)) if "[" in found.group(0) else [found.group(1)]


def test_the_extension_sends_the_server_the_names_core_settings_declares():
    sent = {s.editor_key for s in SETTINGS if SERVER in s.where and EDITOR in s.where}
    assert sorted(_ts_list("SERVER_KEYS")) == sorted(sent)
    # python is sent too, resolved from interpreter (which restarts the server); the trace is the language client's
    assert {s.editor_key for s in SETTINGS if SERVER in s.where} - sent == {"python"}
    assert "out.python = python;" in SOURCES["settings.ts"]
    assert _ts_list("RESTART_KEYS") == ["interpreter"] and _ts_list("TRACE_KEY") == ["trace.server"]
    assert {s.editor_key for s in SETTINGS if s.where == {EDITOR}} == {"interpreter", "trace.server"}


def test_every_method_the_extension_sends_or_listens_to_is_the_server_s():
    """methods.ts spells the server's names; each is registered (or, for what the server
    sends, sent) by the server, and no other file of the extension spells one."""
    spelled = dict(re.findall(r"export const (\w+) = '([^']+)';", SOURCES["methods.ts"]))
    server = build()
    registered = set(server.protocol.fm.features) | set(server.protocol.fm.commands)
    for name, method in spelled.items():
        if name == "EXPORTS_NOTIFICATION":  # the server sends it
            assert method == methods.EXPORTS_NOTIFICATION
            sends = Path(methods.__file__).with_name("server.py").read_text()
            assert "self.protocol.notify(EXPORTS_NOTIFICATION" in sends
        else:
            assert method in registered, f"{name} = {method!r}: the server registers no such method or command"
    assert len(spelled) == 7
    server_names = {v for k, v in vars(methods).items() if k.isupper() and isinstance(v, str)}
    for file, text in SOURCES.items():
        if file != "methods.ts":
            literals = set(re.findall(r"'(exportlens[./][\w./]+)'", text))
            assert not literals & (server_names | {m for m in literals if "/" in m}), (
                f"{file} spells a method: import it from methods.ts"
            )
