"""pyproject.toml's values read by the standard library's parser, tomlkit only where that
refuses the text: every text the editor test types (tests/spec_texts.py) reads to the values
and the error it read to when tomlkit read them all, and a proof's plan of a project of two
hundred tables (the server makes one for each fix it proves) never parses with tomlkit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit.exceptions
from spec_texts import BROKEN

from exportlens.exporter.spec import toml_text
from exportlens.exporter.spec.pyproject import Pyproject

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "pyproject.toml").read_text()


def _as_tomlkit_reads(text: str) -> tuple[object, str | None]:
    """The values and the error of ``text`` as the reader gave them when tomlkit read every text."""
    try:
        return toml_text.parse(text).unwrap(), None
    except tomlkit.exceptions.ParseError as e:
        return None, str(e)


def _typed() -> list[str]:
    """Each broken text whole, and the spec cut at each line's end and inside each line."""
    out = [SPEC.replace(old, new, 1) if old != "\n" else SPEC.replace(old, new) for old, new in BROKEN.values()]
    lines = SPEC.splitlines(keepends=True)
    for n in range(len(lines)):
        out += ["".join(lines[:n]) + lines[n], "".join(lines[:n]) + lines[n][: len(lines[n]) // 2]]
    return list(dict.fromkeys(out))


def test_every_text_typed_reads_to_tomlkits_values_and_errors():
    for text in _typed():
        tree = Pyproject(text)
        values = tree.doc
        assert (values, str(tree.error) if tree.error else None) == _as_tomlkit_reads(text), text


@pytest.mark.skipif(sys.version_info < (3, 11), reason="no TOML parser in the standard library before 3.11")
def test_a_large_project_is_read_without_tomlkit(tmp_path):
    """Two hundred tables: tomlkit took about a third of a second for each text of it, and a
    proof's plan reads one text per fix, in a thread that holds the server's interpreter."""
    table = '\n[tool.exportlens.modules."mods/m{i}.py:M{i}"]\ninputs = {{ x = "f32[batch, 8]" }}\n'
    (tmp_path / "pyproject.toml").write_text(
        '[tool.exportlens]\ndevice = "cpu"\n' + "".join(table.format(i=i) for i in range(200))
    )
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from exportlens.exporter.core.sources import Sources\n"
        "from exportlens.exporter.spec.loading import load_project\n"
        f"project = load_project(Sources.of(Path({str(tmp_path)!r})))\n"
        "assert len(project.tables) == 200 and not project.findings, project.findings\n"
        "print('tomlkit' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
