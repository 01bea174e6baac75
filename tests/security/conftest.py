"""A workspace full of files named like the standard library's and our dependencies'
modules, each of which leaves a mark in a folder outside the workspace when imported, as
the hardening issue's hostile workspace did (its `json.py` copied `~/.ssh/id_rsa`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from server.conftest import EXAMPLES

# what the server, the indexer and the warm worker parent import, the seven first,
# and what `python -m` imports before the first line of ours runs (runpy's, on 3.10 and 3.12+)
SHADOWED = (
    *("json", "ast", "dataclasses", "hashlib", "tomlkit", "pathspec", "typing_extensions"),
    *(
        "__future__",
        "argparse",
        "asyncio",
        "collections",
        "concurrent",
        "contextlib",
        "enum",
        "functools",
        "importlib",
        "inspect",
    ),
    *(
        "keyword",
        "linecache",
        "logging",
        "operator",
        "pathlib",
        "re",
        "reprlib",
        "runpy",
        "selectors",
        "subprocess",
        "tempfile",
    ),
    *(
        "threading",
        "traceback",
        "types",
        "typing",
        "warnings",
        "attrs",
        "cattrs",
        "libcst",
        "lsprotocol",
        "pygls",
        "landlock",
        "sympy",
    ),
)

SHADOW = """\
import os

open(os.path.join({marks!r}, {name!r}), "w").close()
raise ImportError("the workspace's {name}.py was imported")
"""


class Shadowed:
    """A copy of the examples project (its root the workspace folder) with a shadowing file per
    name in SHADOWED at its root; ``imported()`` names the ones some process imported."""

    def __init__(self, root: Path, marks: Path) -> None:
        self.root, self.marks = root, marks

    def imported(self) -> list[str]:
        return sorted(p.name for p in self.marks.iterdir())


@pytest.fixture
def shadowed(tmp_path: Path) -> Shadowed:
    root, marks = tmp_path / "workspace", tmp_path / "marks"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    marks.mkdir()
    for name in SHADOWED:
        (root / f"{name}.py").write_text(SHADOW.format(marks=str(marks), name=name))
    return Shadowed(root, marks)
