"""``exportlens check`` finds modules with the editor's index engine (``bulk.discover_tree``:
prefilter, skeletons, the on-disk cache in ``.exportlens/cache/index``) and finds exactly
what a whole parse of every file (``discover``) finds: syntax errors inside function
bodies included, bases in files it does not scan, a re-export under another name."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from exportlens.cli import main
from exportlens.exporter.find import bulk
from exportlens.exporter.find.bulk import discover_tree
from exportlens.exporter.find.discover import discover
from exportlens.exporter.find.index_cache import IndexCache

TREE = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "pkg/__init__.py": "from .base import Base as Renamed\n",
    "pkg/base.py": "from torch import nn\n\n\nclass Base(nn.Module):\n    def forward(self, x):\n        return x\n",
    "net.py": "from pkg import Renamed\n\n\nclass Net(Renamed):\n    pass\n",
    "body.py": "import torch\n\n\nclass InBody(torch.nn.Module):\n    def f(self):\n        return 1 +\n",
    "uses_body.py": "from body import InBody\n\n\nclass Over(InBody):\n    pass\n",
    "script.py": "print((1)\n",
    "vendor/layers.py": "from torch import nn\n\n\nclass Layer(nn.Module):\n    pass\n",
    "app/model.py": "from vendor.layers import Layer\n\n\nclass Model(Layer):\n    pass\n",
}


def write(root: Path) -> Path:
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_check_s_discovery_is_a_whole_parse_s_and_a_second_reads_only_the_cache(tmp_path, monkeypatch):
    root = write(tmp_path).resolve()
    cache = IndexCache.of_project(root)
    first = discover_tree(root, [root], cache)
    assert first == discover(root)
    assert {m.name for m in first.modules} == {"Base", "Net", "Layer", "Model"}  # Over's base does not parse
    assert [(f.path, f.line) for f in first.findings] == [("body.py", 6), ("script.py", 1)]
    assert (root / ".exportlens" / ".gitignore").is_file() and (root / ".exportlens/cache/index/CACHEDIR.TAG").is_file()
    monkeypatch.setattr(bulk, "index_tree", None)  # a second check of the unchanged tree indexes nothing
    assert discover_tree(root, [root], cache) == first


def test_a_file_checked_alone_follows_its_bases_into_files_not_scanned(tmp_path):
    root = write(tmp_path).resolve()
    for scanned in ("net.py", "app/model.py", "uses_body.py"):
        assert discover_tree(root, [root / scanned]) == discover(root, [root / scanned])
    assert [m.name for m in discover_tree(root, [root / "app"]).modules] == ["Model"]


def test_an_edit_is_seen_and_no_cache_keeps_nothing(tmp_path, capsys):
    root = write(tmp_path).resolve()
    assert main(["check", str(root), "--no-cache"]) == 1
    assert not (root / ".exportlens").exists()
    main(["check", str(root)])
    (root / "pkg" / "base.py").write_text("class Base:\n    pass\n", encoding="utf-8")
    capsys.readouterr()
    main(["check", str(root), "--format", "json"])
    assert "Net" not in capsys.readouterr().out  # its base is no module any more: the kept answer was not used


def test_a_damaged_or_truncated_index_cache_is_a_cold_run_with_the_same_report(tmp_path, capsys):
    root = write(tmp_path).resolve()
    main(["check", str(root)])
    report = capsys.readouterr().out
    folder = root / ".exportlens" / "cache" / "index"
    kept = sorted(folder.glob("*.json*"))
    assert [f.suffix for f in kept] == [".json", ".jsonl"]  # the kept answer, and each file's entry
    for damage in (lambda data: data[: len(data) // 2], lambda data: data.replace(b"[", b"{", 3), lambda _: b"\x80"):
        for f in kept:
            f.write_bytes(damage(f.read_bytes()))
        main(["check", str(root)])
        assert capsys.readouterr().out == report


def _codes_of(capsys, root: Path, target: str) -> list[str]:
    main(["check", str(root), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return [f["code"] for m in report["modules"] if m["target"] == target for f in m["findings"]]


def test_a_suppression_comment_added_or_removed_is_seen_by_the_next_check(tmp_path, capsys):
    root = write(tmp_path).resolve()
    assert _codes_of(capsys, root, "net.py:Net") == ["EL007"]  # cold: the answer is kept
    assert _codes_of(capsys, root, "net.py:Net") == ["EL007"]  # from the kept answer
    net = root / "net.py"
    plain = net.read_text(encoding="utf-8")
    net.write_text(plain.replace("(Renamed):", "(Renamed):  # exportlens: ignore[EL007]"), encoding="utf-8")
    assert _codes_of(capsys, root, "net.py:Net") == []  # the file now holds a comment: it is read for it
    assert _codes_of(capsys, root, "net.py:Net") == []  # and the kept answer says so
    net.write_text(plain, encoding="utf-8")
    assert _codes_of(capsys, root, "net.py:Net") == ["EL007"]
    assert _codes_of(capsys, root, "net.py:Net") == ["EL007"]
