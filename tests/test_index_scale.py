"""The workspace index at scale (``find.bulk``): a text pre-filter, outlines parsed with
function bodies blanked, a pool, an on-disk cache. Whatever it skips, it finds exactly the
modules a full scan finds, with the same positions, on a tree of every tricky case."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exportlens.exporter.find.bulk import index_tree
from exportlens.exporter.find.discover import discover
from exportlens.exporter.find.index_cache import IndexCache
from exportlens.exporter.find.skeleton import skeleton
from exportlens.exporter.find.walk import python_files_under
from exportlens.exporter.spec.pyproject import excludes
from exportlens.server.index.module_index import ModuleIndex
from exportlens.server.index.scanner import entry_of

TREE = {
    "pkg/__init__.py": "from .layers import Block as Block\nfrom .generic import *\n",
    "pkg/layers.py": """
        import torch.nn as N
        from torch import nn as tnn

        class Block(N.Module):
            @staticmethod
            def helper(x):
                return {"(": x}  # a bracket in a string: this body is kept whole

            def forward(self, x: "torch.Tensor", scale: float = 1.0, *, mask=None, **kw) -> "torch.Tensor":
                '''A docstring whose lines
        start at column 0, with a fake
        class Fake(tnn.Module):
            def forward(self): ...
        '''
                y = (x +
          1)
                return y * scale  # the last statement, then a comment
                # trailing

        class Outer:
            class Inner(tnn.Linear):
                pass
    """,
    "pkg/generic.py": """
        from typing import Generic, TypeVar
        import torch

        T = TypeVar("T")

        class Typed(torch.nn.Module, Generic[T]):
            def forward(self, x): return x
    """,
    "pkg/conditional.py": """
        from typing import TYPE_CHECKING
        try:
            from .layers import Block
        except ImportError:  # pragma: no cover
            Block = object
        if TYPE_CHECKING:
            from .layers import Outer
        else:
            from . import layers

        class FromTry(Block):
            pass

        class FromModuleAlias(layers.Outer.Inner):
            def forward(self, x,
                        y=None):  # a signature over two lines
                if x is None:
                    raise ValueError(
        "a message at column 0, inside brackets")
                return x

        if True:
            class InsideIf(Block):
                pass
    """,
    "pkg/stars.py": """
        from torch.nn import *
        from .generic import *

        class StarTorch(Module):
            pass

        class StarProject(Typed):
            def example_inputs(self):
                return ()
    """,
    "pkg/unicode.py": """
        import torch.nn as nn
        ÉCHELLE = "é"; class_like = "class Nope(nn.Module):"
        class Größe(nn.Module):  # a non-ASCII name: columns count characters, not bytes
            dynamic_shapes = None
            def forward(self, x): return x  # ünïcode
    """,
    "pkg/decorated.py": """
        import functools
        from .layers import Block

        def make_base(x):
            return Block

        @functools.total_ordering
        class Decorated(Block):
            @torch.no_grad()
            def forward(self, x):
                return x

        class FromCall(make_base(1), Block):
            def forward(self, x): \\
                    return x
    """,
    "pkg/broken.py": """
        from .layers import Block

        class Fine(Block):
            def forward(self, x):
                return x
    """,
    "app/notmodels.py": """
        class Config:
            hidden = 4

        class Tokenizer(object):
            def encode(self, text):
                return [ord(c) for c in text]
    """,
}
FILLERS = 70  # over pool.SERIAL_BELOW: the pool runs


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    for i in range(FILLERS):
        (root / "app" / f"helpers_{i}.py").write_text(f"def helper_{i}(x):\n    return x + {i}\n", encoding="utf-8")
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    return root


def _full(root: Path) -> list:
    return sorted(discover(root).modules, key=lambda m: (m.path, m.span.line))


def _bulk(root: Path, **kwargs) -> list:
    found = index_tree(root, sorted(python_files_under(root, exclude=excludes())), **kwargs)
    return sorted((m for ms in found.modules.values() for m in ms), key=lambda m: (m.path, m.span.line))


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_index_finds_what_a_full_scan_finds_with_the_same_positions(tree: Path, jobs: int):
    full = _full(tree)
    assert {m.target for m in full} == {
        "pkg/layers.py:Block",
        "pkg/generic.py:Typed",
        "pkg/conditional.py:FromTry",
        "pkg/conditional.py:FromModuleAlias",
        "pkg/conditional.py:InsideIf",
        "pkg/stars.py:StarTorch",
        "pkg/stars.py:StarProject",
        "pkg/unicode.py:Größe",
        "pkg/decorated.py:Decorated",
        "pkg/decorated.py:FromCall",
        "pkg/broken.py:Fine",
    }  # not Outer.Inner: a nested class is a base, never a module of its own
    assert _bulk(tree, jobs=jobs) == full


def test_forward_is_read_where_its_body_was_blanked(tree: Path):
    (block,) = [m for m in _bulk(tree, jobs=1) if m.name == "Block"]
    assert [p.name for p in block.forward.params] == ["x", "scale", "mask", "kw"]
    assert block.forward.params[1].has_default and block.forward.params[0].annotation == '"torch.Tensor"'
    assert block.forward.body_lines == (10, 17)  # the docstring's first line to the return
    assert block.forward.span.end_line == 17 and block.forward.span.end_column == len("        return y * scale") + 1
    (size,) = [m for m in _bulk(tree, jobs=1) if m.name == "Größe"]
    assert (size.name_span.column, size.name_span.end_column) == (7, 12)
    assert size.has_dynamic_shapes


def test_a_second_run_reads_only_the_cache_and_an_edited_base_is_followed(tree: Path, tmp_path: Path):
    cache = IndexCache(tmp_path / "cache")
    files = sorted(python_files_under(tree, exclude=excludes()))
    first = index_tree(tree, files, cache=cache)
    first.save()
    again = index_tree(tree, files, cache=cache)
    assert (again.sketched, again.parsed) == (0, 0)
    assert again.modules == first.modules
    # Block stops being a module: every class built on it, in other files, follows
    layers = tree / "pkg" / "layers.py"
    layers.write_text(layers.read_text().replace("class Block(N.Module):", "class Block:"), encoding="utf-8")
    edited = index_tree(tree, files, cache=cache)
    assert edited.sketched == 1
    names = {m.name for ms in edited.modules.values() for m in ms}
    assert "Block" not in names and "FromTry" not in names and "Fine" not in names
    assert names == {m.name for m in _full(tree)}


def test_a_syntax_error_outside_bodies_is_found_and_one_in_a_blanked_body_is_left_to_the_editor(tree: Path):
    (tree / "pkg" / "header.py").write_text(
        "import torch\nclass Bad(torch.nn.Module):\n    def forward(self x):\n        return x\n", encoding="utf-8"
    )
    (tree / "pkg" / "body.py").write_text(
        "import torch\nclass Ok(torch.nn.Module):\n    def f(self):\n        return 1 +\n", encoding="utf-8"
    )
    found = index_tree(tree, sorted(python_files_under(tree, exclude=excludes())), jobs=1)
    (error,) = found.findings[tree / "pkg" / "header.py"]
    assert error.line == 3 and error.message.startswith("syntax error: invalid syntax")
    assert [m.name for m in found.modules[tree / "pkg" / "body.py"]] == ["Ok"]  # its body was not parsed
    assert tree / "pkg" / "body.py" not in found.findings
    assert [f.path for f in discover(tree).findings] == ["pkg/body.py", "pkg/header.py"]  # a whole parse sees both


def test_skeleton_keeps_every_line_and_blanks_only_what_it_can_prove():
    text = textwrap.dedent(TREE["pkg/layers.py"]).lstrip("\n")
    blanked = skeleton(text)
    assert blanked.text.count("\n") == text.count("\n")
    assert "return y * scale" not in blanked.text  # forward's body is blanked, its lines kept
    assert '{"(": x}' in blanked.text  # counts that cannot tell: kept
    assert ast.dump(ast.parse(blanked.text).body[3]) == ast.dump(ast.parse(text).body[3])  # Outer, untouched


def test_the_indexer_answers_an_unchanged_folder_from_its_cache_and_sees_a_new_file(tree: Path, tmp_path: Path):
    env = {**os.environ, "EXPORTLENS_INDEX_CACHE": str(tmp_path / "cache")}

    def targets() -> set[str]:
        done = subprocess.run(
            [sys.executable, "-m", "exportlens.server.index.scanner", str(tree)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return {str(entry_of(line)[0]) for line in done.stdout.splitlines()}

    first = targets()
    assert targets() == first
    (tree / "pkg" / "later.py").write_text("import torch\nclass Later(torch.nn.Module):\n    pass\n", encoding="utf-8")
    assert targets() == first | {str(tree / "pkg" / "later.py")}


def test_the_editor_rescan_follows_a_base_edited_on_disk(tree: Path):
    index = ModuleIndex(folders=[tree])
    path = tree / "pkg" / "broken.py"
    text = path.read_text()
    assert [m.name for m in index.scan(path, {path: text}).modules] == ["Fine"]
    layers = tree / "pkg" / "layers.py"
    layers.write_text(layers.read_text().replace("class Block(N.Module):", "class Block:"), encoding="utf-8")
    assert index.scan(path, {path: text + "\n"}).modules == ()


def test_the_indexer_lists_a_module_a_factory_table_declares(tmp_path: Path):
    from exportlens.server.index.scanner import scan

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "build.py").write_text(
        "from torch import nn\n\n\ndef build_mlp(width):\n    return nn.Linear(width, width)\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.exportlens.modules."models/build.py:mlp"]\nfactory = "models/build.py:build_mlp"\n'
    )
    ((path, entry),) = list(scan(tmp_path))
    assert path == tmp_path / "models" / "build.py"
    assert [(m.target, m.name_span.line) for m in entry.modules] == [("models/build.py:mlp", 4)]


def test_the_indexer_answers_again_when_pyproject_toml_declares_a_new_factory_module(tmp_path: Path):
    """An edit of pyproject.toml changes no Python file, but may declare a module in one."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "models" / "build.py").write_text(
        "from torch import nn\n\n\ndef build_mlp(width):\n    return nn.Linear(width, width)\n"
    )
    spec = project / "pyproject.toml"
    spec.write_text("[project]\nname = 'p'\n")
    env = {**os.environ, "EXPORTLENS_INDEX_CACHE": str(tmp_path / "cache")}

    def paths() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "exportlens.server.index.scanner", str(project)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return [str(entry_of(line)[0]) for line in done.stdout.splitlines()]

    assert paths() == []
    with spec.open("a") as f:  # written in place: the folder's own stamp does not change
        f.write('\n[tool.exportlens.modules."models/build.py:mlp"]\nfactory = "models/build.py:build_mlp"\n')
    assert paths() == [str(project / "models" / "build.py")]
