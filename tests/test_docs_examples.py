"""Every example in docs/diagnostics.md prints what the docs say it prints.

Each "$ exportlens check ." block is checked on a project made of the files shown
before it in the same section (a "`net.py`:" label, then its code block), and printed
by the CLI's own code. The examples share one pool of workers, as one long `exportlens
check` would, instead of importing torch once per example."""

from __future__ import annotations

import re
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
def test_the_example_prints_what_the_docs_show(tmp_path, monkeypatch, capsys, pool, line, files, printed):
    from exportlens import cli
    from exportlens.exporter.core.options import Options
    from exportlens.exporter.workers.batch import export_in_workers

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the CLI prints paths relative to where it runs
    found = cli._projects([Path(".")])
    assert found, f"docs/diagnostics.md:{line}: {capsys.readouterr().err}"
    plan = found[0].plan
    cli.print_text(plan.root, export_in_workers(plan, pool, Options(collect_all=True)))
    assert capsys.readouterr().out == printed, f"docs/diagnostics.md:{line}"
