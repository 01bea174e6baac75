"""Every nn.Module class of a package is indexed, wherever the scan starts (issue 12).

A package without pyproject.toml above it: file names and relative imports come from the
package chain (the folders holding ``__init__.py``), and the project root is the folder
the scan was given, never each file's own folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exportlens.exporter.spec.plan import make_plan
from exportlens.server.index.module_index import ModuleIndex
from exportlens.server.index.scanner import entry_of, scan

ACME = {
    "acme/__init__.py": """\
        from typing import TYPE_CHECKING

        from .core.base import Base

        if TYPE_CHECKING:
            from .models import TextEncoder
        else:
            from .models.text.encoder import TextEncoder
        """,
    "acme/core/__init__.py": "",
    "acme/core/base.py": """\
        from typing import TYPE_CHECKING

        from torch import nn as tnn


        class Base(tnn.Module):
            def forward(self, x):
                return x


        class BaseConfig:
            pass


        if TYPE_CHECKING:

            class Typed(tnn.Module):  # for type checkers only: never at runtime
                pass
        """,
    "acme/core/shadow.py": """\
        class Module:  # its own class, named as torch's
            pass


        class Fake(Module):
            pass


        class ModuleConfig:
            pass
        """,
    "acme/core/stars.py": """\
        from torch.nn import *


        class Starred(Module):
            pass


        class Linearish(Linear):
            pass


        Plain = object  # bound here: no star import binds it


        class NotStarred(Plain):
            pass
        """,
    "acme/core/outer.py": """\
        import torch


        class Outer:
            class Inner(torch.nn.Module):
                pass

            class Settings:
                pass


        class Wrapped(Outer.Inner):
            pass


        class NotWrapped(Outer.Settings):
            pass
        """,
    "acme/models/__init__.py": """\
        from .vision import *
        from .text.encoder import TextEncoder
        """,
    "acme/models/vision/__init__.py": "from .net import VisionNet as VisionNet\n",
    "acme/models/vision/net.py": """\
        try:
            from ...core.base import Base
        except ImportError:
            Base = object


        class VisionNet(Base):
            pass
        """,
    "acme/models/text/__init__.py": "",
    "acme/models/text/encoder.py": """\
        import os

        from ..vision.net import VisionNet
        from ...core.outer import Outer

        if os.environ.get("ACME_PLAIN"):
            from ...core.base import BaseConfig as Backbone
        else:
            from ...core.base import Base as Backbone


        class TextEncoder(VisionNet):
            pass


        class Nested(Outer.Inner):
            pass


        class Chosen(Backbone):
            pass
        """,
    "acme/apps.py": """\
        import acme
        from acme import Base as PublicBase
        from acme.models import TextEncoder
        from acme.core.base import BaseConfig
        from acme.core.stars import *


        class App(PublicBase):
            pass


        class TextApp(TextEncoder):
            pass


        class VisionApp(acme.models.VisionNet):
            pass


        class StarredApp(Linearish):
            pass


        class Settings(BaseConfig):
            pass
        """,
}

MODULES = {  # (file in the package, class): every nn.Module class defined at its top level
    ("core/base.py", "Base"),
    ("core/stars.py", "Starred"),
    ("core/stars.py", "Linearish"),
    ("core/outer.py", "Wrapped"),
    ("models/vision/net.py", "VisionNet"),
    ("models/text/encoder.py", "TextEncoder"),
    ("models/text/encoder.py", "Nested"),
    ("models/text/encoder.py", "Chosen"),
    ("apps.py", "App"),
    ("apps.py", "TextApp"),
    ("apps.py", "VisionApp"),
    ("apps.py", "StarredApp"),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def class_line(path: Path, name: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(f"class {name}("))


def indexed(folder: Path) -> tuple[set[Path], set[tuple[str, str, int]]]:
    """The roots the indexer gave, and each module as (path in the report, class, line)."""
    entries = list(scan(folder))
    return {e.root for _, e in entries}, {(m.path, m.name, m.span.line) for _, e in entries for m in e.modules}


def expected(root: Path, prefix: str) -> set[tuple[str, str, int]]:
    return {(prefix + path, name, class_line(root / "acme" / path, name)) for path, name in MODULES}


@pytest.mark.parametrize("start", ["acme", "."])
def test_every_module_of_a_package_without_pyproject(tmp_path, start):
    write(tmp_path, ACME)
    folder = (tmp_path / start).resolve()
    roots, found = indexed(folder)
    assert roots == {folder}  # the folder the scan was given, for every file
    assert found == expected(tmp_path, "" if start == "acme" else "acme/")


def test_bases_are_named_by_the_package_chain(tmp_path):
    write(tmp_path, ACME)
    modules = {m.name: m for _, e in scan(tmp_path / "acme") for m in e.modules}
    assert modules["VisionNet"].bases == ("acme.core.base.Base",)  # from ...core.base, the scan at acme/
    assert modules["App"].bases == ("acme.Base",)  # re-exported by acme/__init__.py
    assert modules["VisionApp"].bases == ("acme.models.VisionNet",)
    assert modules["Starred"].bases == ("torch.nn.Module",)  # from torch.nn import *
    assert modules["StarredApp"].bases == ("acme.core.stars.Linearish",)
    assert modules["Wrapped"].bases == ("acme.core.outer.Outer.Inner",)
    assert modules["Wrapped"].forward is None and modules["App"].forward.params[0].name == "x"


def test_a_pyproject_above_still_makes_the_root(tmp_path):
    write(tmp_path, {**ACME, "pyproject.toml": "[project]\nname = 'acme'\n"})
    roots, found = indexed(tmp_path / "acme")
    assert roots == {tmp_path.resolve()}
    assert found == expected(tmp_path, "acme/")


@pytest.mark.parametrize(
    "marker, root",
    [(None, "."), ("setup.py", "."), ("setup.cfg", "."), (".git", "."), ("acme/setup.cfg", "acme")],
)
def test_a_file_checked_alone_belongs_to_its_checkout_or_its_packages(tmp_path, marker, root):
    """``exportlens check FILE``: no folder was given; setup.py, setup.cfg or .git above the
    file make the root, else the folder above its package chain."""
    write(tmp_path, ACME)
    if marker == ".git":
        (tmp_path / ".git").mkdir()
    elif marker:
        (tmp_path / marker).write_text("")
    plan = make_plan([tmp_path / "acme" / "models" / "text" / "encoder.py"])
    assert plan.root == (tmp_path / root).resolve()
    prefix = "acme/" if root == "." else ""
    assert [m.target for m in plan.modules] == [
        f"{prefix}models/text/encoder.py:{n}" for n in ("TextEncoder", "Nested", "Chosen")
    ]


def test_the_server_s_rescan_of_an_open_file_uses_its_workspace_folder(tmp_path):
    write(tmp_path, ACME)
    folder = (tmp_path / "acme").resolve()
    entry = ModuleIndex(folders=[folder]).compute(folder / "apps.py", {})
    assert entry.root == folder
    assert [m.target for m in entry.modules] == [
        "apps.py:App",
        "apps.py:TextApp",
        "apps.py:VisionApp",
        "apps.py:StarredApp",
    ]


def test_a_large_open_file_parsed_in_a_subprocess_uses_its_workspace_folder(tmp_path):
    """``indexer --one FILE FOLDER``: the server's parse of a file too large to parse in itself."""
    write(tmp_path, ACME)
    folder, path = (tmp_path / "acme").resolve(), (tmp_path / "acme" / "apps.py").resolve()
    command = [sys.executable, "-m", "exportlens.server.index.scanner", "--one", str(path), str(folder)]
    done = subprocess.run(command, input=path.read_text(), capture_output=True, text=True, timeout=120)
    _, entry = entry_of(done.stdout)
    assert entry.root == folder
    assert [m.name for m in entry.modules] == ["App", "TextApp", "VisionApp", "StarredApp"]


# -- real files: transformers, copied without a pyproject.toml ------------------------------

TRANSFORMERS_FILES = (
    "__init__.py",
    "modeling_utils.py",
    "modeling_layers.py",
    "models/__init__.py",
    "models/bert/__init__.py",
    "models/bert/configuration_bert.py",
    "models/bert/modeling_bert.py",
)


def _indexer(folder: Path) -> dict[str, tuple[Path, set[str]]]:
    """What the server's indexer subprocess reports: each file's root and classes."""
    done = subprocess.run(
        [sys.executable, "-m", "exportlens.server.index.scanner", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = {}
    for line in done.stdout.splitlines():
        path, entry = entry_of(line)
        out[path.name] = (entry.root, {m.name for m in entry.modules})
    return out


@pytest.mark.slow
@pytest.mark.parametrize("start", ["transformers", "."])
def test_every_bert_module_of_a_transformers_copy_is_found(tmp_path, start):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    installed = Path(transformers.__file__).parent
    for name in TRANSFORMERS_FILES:
        (tmp_path / "transformers" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(installed / name, tmp_path / "transformers" / name)
    from transformers.models.bert import modeling_bert

    defined = (
        c for c in vars(modeling_bert).values() if isinstance(c, type) and c.__module__ == modeling_bert.__name__
    )
    truth = {c.__name__ for c in defined if issubclass(c, torch.nn.Module)}
    assert {"BertForMaskedLM", "BertLayer", "BertEmbeddings"} <= truth
    folder = (tmp_path / start).resolve()
    root, found = _indexer(folder)["modeling_bert.py"]
    assert root == folder
    assert found == truth


def test_bases_resolved_in_an_earlier_batch_of_a_large_scan(tmp_path):
    """The indexer scans in batches and keeps only what bases resolved to between them: a
    chain of 80 classes across 80 files, each with the forward of the first."""
    files = {
        "pkg/__init__.py": "",
        "pkg/m00.py": "from torch import nn\n\n\nclass M00(nn.Module):\n    def forward(self, x):\n        return x\n",
    }
    for i in range(1, 80):
        files[f"pkg/m{i:02}.py"] = f"from .m{i - 1:02} import M{i - 1:02}\n\n\nclass M{i:02}(M{i - 1:02}):\n    pass\n"
    write(tmp_path, files)
    modules = sorted((m for _, e in scan(tmp_path) for m in e.modules), key=lambda m: m.name)
    assert [m.target for m in modules] == [f"pkg/m{i:02}.py:M{i:02}" for i in range(80)]
    assert {m.forward.name_span.line for m in modules} == {5}  # m00.py's, read in the first batch
    assert modules[-1].bases == ("pkg.m78.M78",)
