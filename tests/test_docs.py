"""Every diagnostic code a user can meet is documented where its link points, and
docs/architecture.md's map names every module of the package, and only modules."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import exportlens
from exportlens.exporter.core import codes

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = Path(exportlens.__file__).resolve().parent


def test_every_code_has_a_section_and_a_table_row():
    for code in codes.ALL:
        assert f"\n## {code.code} — {code.title}\n" in DOCS, f"no section for {code.code}"
        assert f"| [{code.code}](#{code.code.lower()}) | {code.kind.value} |" in DOCS, f"no table row for {code.code}"
        assert codes.docs_url(code.code).endswith(f"diagnostics.md#{code.code.lower()}")


def _mapped() -> dict[str, list[str]]:
    """Each folder's section of the map (a ``### `exportlens/…/` `` heading) -> the module
    names its table's rows give (a row's first cell, `` `stem` ``)."""
    sections: dict[str, list[str]] = {}
    folder = None
    for line in ARCHITECTURE.splitlines():
        if line.startswith("#"):
            heading = re.fullmatch(r"### `(exportlens(?:/\w+)*)/`", line)
            folder = heading.group(1) if heading else None
            if folder is not None:
                sections[folder] = []
        elif folder is not None and (row := re.match(r"\| `(\w+)` \|", line)):
            sections[folder].append(row.group(1))
    return sections


def test_the_architecture_map_names_every_module_once_and_only_modules():
    real: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.stem != "__init__":
            real.setdefault(path.parent.relative_to(PACKAGE.parent).as_posix(), set()).add(path.stem)
    mapped = _mapped()
    missing = sorted(f"{f}/{m}.py" for f, stems in real.items() for m in stems - set(mapped.get(f, ())))
    extra = sorted(f"{f}/{m}.py" for f, names in mapped.items() for m in set(names) - real.get(f, set()))
    twice = sorted(f"{f}/{m}.py" for f, names in mapped.items() for m, n in Counter(names).items() if n > 1)
    assert not (missing or extra or twice), (
        f"docs/architecture.md's map: not named {missing}; no such module {extra}; named twice {twice}"
    )


def test_every_python_file_the_architecture_doc_names_exists():
    """``runtime/run.py``, ``features/actions.py`` or ``sandbox.py``: a file of the package or
    the tests, its folders as far as the text gives them."""
    files = [p.relative_to(ROOT).as_posix() for top in ("exportlens", "tests") for p in (ROOT / top).rglob("*.py")]
    named = set(re.findall(r"(?<![\w/.])((?:\w+/)*\w+\.py)\b(?!:)", ARCHITECTURE))  # not a target: path.py:Class
    gone = sorted(n for n in named if not any(f == n or f.endswith(f"/{n}") for f in files))
    assert not gone, f"docs/architecture.md names files that do not exist: {gone}"
