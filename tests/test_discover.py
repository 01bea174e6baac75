"""Static discovery of nn.Module classes (exportlens.exporter.find.discover)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exportlens.exporter.core import codes
from exportlens.exporter.core.targets import Param, ParamKind, Span
from exportlens.exporter.find.discover import discover
from exportlens.exporter.spec.plan import make_plan
from exportlens.server.index.scanner import entry_of

PROJECT = Path(__file__).parent / "data" / "discover" / "project"


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def by_name(discovery) -> dict:
    return {m.name: m for m in discovery.modules}


@pytest.fixture(scope="module")
def project():
    return by_name(discover(PROJECT))


# -- how a class reaches torch.nn.Module --------------------------------------------


@pytest.mark.parametrize(
    "name, base",
    [
        ("FromTorchImportNn", "torch.nn.Module"),
        ("ImportTorch", "torch.nn.Module"),
        ("TorchNnAs", "torch.nn.Module"),
        ("ModuleAs", "torch.nn.Module"),
        ("Deep", "torch.nn.modules.module.Module"),
        ("Stack", "torch.nn.Sequential"),
        ("Dense", "torch.nn.Linear"),
        ("Layer", "torch.nn.TransformerEncoderLayer"),
        ("SameFile", "models.aliases.FromTorchImportNn"),
    ],
)
def test_alias_forms(project, name, base):
    assert project[name].path == "models/aliases.py"
    assert project[name].bases == (base,)


def test_non_modules_are_not_listed(project):
    assert "Plain" not in project  # has a forward, but no module base
    assert "Weight" not in project  # nn.Parameter is a tensor
    assert "Local" not in project  # a function's local class


@pytest.mark.parametrize(
    "name, path, base",
    [
        ("Absolute", "models/absolute.py", "models.base.Base"),
        ("Relative", "models/relative.py", "models.base.Base"),
        ("ViaModuleAlias", "models/module_alias.py", "models.base.Base"),
        ("ViaPackage", "models/reexport.py", "models.Base"),  # re-exported by models/__init__.py
        ("Block", "pkg/layers/blocks.py", "pkg.core.Core"),  # from ..core import Core
    ],
)
def test_subclass_of_another_project_file(project, name, path, base):
    assert project[name].path == path
    assert project[name].bases == (base,)


def test_base_outside_the_scanned_paths():
    found = discover(PROJECT, [PROJECT / "apps"])
    assert [m.target for m in found.modules] == ["apps/app.py:App"]
    assert found.modules[0].forward.params == (Param("x", ParamKind.POSITIONAL),)  # from models/base.py


def test_a_single_file_with_a_relative_base():
    found = discover(PROJECT, [PROJECT / "models" / "relative.py"])
    assert [m.target for m in found.modules] == ["models/relative.py:Relative"]


def test_results_sorted_by_path_then_line():
    found = discover(PROJECT)
    keys = [(m.path, m.span.line) for m in found.modules]
    assert keys == sorted(keys)
    assert found.findings == []


# -- forward ------------------------------------------------------------------------


def test_forward_params(project):
    assert project["Relative"].forward.params == (Param("x", ParamKind.POSITIONAL), Param("y", ParamKind.POSITIONAL))
    assert project["Core"].forward.params == (
        Param("x", ParamKind.POSITIONAL),
        Param("scale", ParamKind.KEYWORD_ONLY, has_default=True, annotation="float"),
    )


def test_forward_param_kinds(tmp_path):
    write(
        tmp_path,
        {
            "net.py": """\
        from torch import nn


        class Net(nn.Module):
            def forward(self, a, /, b: "Tensor" = None, *args: int, c, d=2, **kwargs):
                return a
        """
        },
    )
    (net,) = discover(tmp_path).modules
    assert net.forward.params == (
        Param("a", ParamKind.POSITIONAL_ONLY),
        Param("b", ParamKind.POSITIONAL, has_default=True, annotation='"Tensor"'),
        Param("args", ParamKind.VAR_POSITIONAL, annotation="int"),
        Param("c", ParamKind.KEYWORD_ONLY),
        Param("d", ParamKind.KEYWORD_ONLY, has_default=True),
        Param("kwargs", ParamKind.VAR_KEYWORD),
    )


def test_forward_inherited_from_a_project_base(project):
    forward = project["Block"].forward
    assert forward == project["Core"].forward  # spans point into pkg/core.py
    assert forward.name_span == Span(5, 9, 5, 16)


def test_forward_only_in_torch_is_none(project):
    assert project["Stack"].forward is None
    assert project["ImportTorch"].forward is None


# -- example inputs -----------------------------------------------------------------


def test_example_inputs(tmp_path):
    write(
        tmp_path,
        {
            "nets.py": """\
        import torch


        class Both(torch.nn.Module):
            @staticmethod
            def get_example_inputs():
                return (torch.randn(2),)

            @classmethod
            def example_inputs(cls):
                return (torch.randn(2),)

            dynamic_shapes = {"x": {0: "batch"}}


        class Legacy(torch.nn.Module):
            @staticmethod
            def get_example_inputs():
                return (torch.randn(2),)

            def dynamic_shapes(self):
                return None


        class Without(torch.nn.Module):
            pass
        """
        },
    )
    nets = by_name(discover(tmp_path))
    assert (nets["Both"].example_method, nets["Both"].example_span) == ("example_inputs", Span(10, 9, 10, 23))
    assert nets["Both"].has_dynamic_shapes
    assert (nets["Legacy"].example_method, nets["Legacy"].example_span) == ("get_example_inputs", Span(18, 9, 18, 27))
    assert nets["Legacy"].has_dynamic_shapes
    assert (nets["Without"].example_method, nets["Without"].example_span) == (None, None)
    assert not nets["Without"].has_dynamic_shapes


# -- spans --------------------------------------------------------------------------


def test_spans(tmp_path):
    write(
        tmp_path,
        {
            "net.py": """\
        from torch import nn


        class Net(nn.Module):
            \"\"\"Doc.\"\"\"

            def forward(self, x, *, scale: float = 1.0):
                y = x * scale
                return y
        """
        },
    )
    (net,) = discover(tmp_path).modules
    assert net.span == Span(4, 1, 9, 17)
    assert net.name_span == Span(4, 7, 4, 10)
    assert net.forward.span == Span(7, 5, 9, 17)
    assert net.forward.name_span == Span(7, 9, 7, 16)
    assert net.forward.body_lines == (8, 9)


def test_spans_of_one_line_bodies(project):
    absolute = project["Absolute"]
    assert absolute.span == Span(4, 1, 5, 9)
    assert absolute.name_span == Span(4, 7, 4, 15)


def test_one_line_forward(tmp_path):
    write(tmp_path, {"net.py": "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x): return x\n"})
    (net,) = discover(tmp_path).modules
    assert net.forward.span == Span(4, 5, 4, 35)
    assert net.forward.body_lines == (4, 4)


def test_classes_in_module_level_blocks(tmp_path):
    write(
        tmp_path,
        {
            "net.py": """\
        try:
            from torch import nn
        except ImportError:
            nn = None

        if nn is not None:
            class Guarded(nn.Module):
                class Inner(nn.Module):  # nested classes are not discovered
                    pass
        """
        },
    )
    assert [(m.name, m.span.line) for m in discover(tmp_path).modules] == [("Guarded", 7)]


# -- files that do not parse --------------------------------------------------------


def test_syntax_error_is_reported_and_the_folder_still_scanned(tmp_path):
    write(
        tmp_path,
        {
            "bad.py": "from torch import nn\n\nclass Bad(nn.Module):\n    def forward(self, x:\n        return x\n",
            "good.py": "from torch import nn\n\nclass Good(nn.Module):\n    pass\n",
        },
    )
    found = discover(tmp_path)
    assert [m.target for m in found.modules] == ["good.py:Good"]
    (finding,) = found.findings
    assert finding.code == codes.SYNTAX_ERROR.code
    assert (finding.path, finding.line, finding.column) == ("bad.py", 4, 16)
    assert finding.message == "syntax error: '(' was never closed"


def test_syntax_error_in_a_file_without_classes(tmp_path):
    write(tmp_path, {"script.py": "import torch\nprint(torch.ones(2)\n"})
    (finding,) = discover(tmp_path).findings
    assert (finding.code, finding.path, finding.line, finding.column) == ("EL401", "script.py", 2, 6)
    assert finding.message == "syntax error: '(' was never closed"


def test_invalid_utf8_is_a_finding(tmp_path):
    write(
        tmp_path,
        {"latin.py": b"x = 1\ns = '\xe9'\n", "good.py": "import torch\n\nclass Good(torch.nn.Module):\n    pass\n"},
    )
    found = discover(tmp_path)
    assert [m.name for m in found.modules] == ["Good"]
    (finding,) = found.findings
    assert (finding.code, finding.path, finding.line, finding.column) == ("EL401", "latin.py", 2, 6)
    assert "UTF-8" in finding.message


def test_syntax_error_in_an_imported_file_is_not_reported(tmp_path):
    write(tmp_path, {"base.py": "class Base(:\n", "net.py": "from base import Base\n\nclass Net(Base):\n    pass\n"})
    found = discover(tmp_path, [tmp_path / "net.py"])
    assert (found.modules, found.findings) == ([], [])


# -- which files ----------------------------------------------------------------------


def test_skipped_folders(tmp_path):
    module = "from torch import nn\n\nclass M(nn.Module):\n    pass\n"
    skipped = [
        ".hidden/a.py",
        "__pycache__/a.py",
        ".venv/a.py",
        "venv/a.py",
        "node_modules/a.py",
        "build/a.py",
        "dist/a.py",
        "lib/site-packages/a.py",
    ]
    write(tmp_path, {name: module for name in [*skipped, "src/kept.py"]})
    assert [m.target for m in discover(tmp_path).modules] == ["src/kept.py:M"]


def test_unsaved_sources_override_the_disk(tmp_path):
    write(tmp_path, {"net.py": "class Net:\n    pass\n"})
    sources = {
        tmp_path / "net.py": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n",
        tmp_path / "new.py": "from net import Net\n\nclass New(Net):\n    pass\n",  # not saved yet
    }
    assert [m.target for m in discover(tmp_path, sources=sources).modules] == ["net.py:Net", "new.py:New"]


def test_cycles_end(tmp_path):
    write(
        tmp_path,
        {
            "a.py": "from b import B\n\nclass A(B):\n    pass\n",
            "b.py": "from a import A\n\nclass B(A):\n    pass\n",
            "pkg/__init__.py": "from pkg.x import X\n",
            "pkg/x.py": "from pkg import X\n\nclass Y(X):\n    pass\n",
        },
    )
    assert discover(tmp_path).modules == []


def test_src_layout_and_script_style_imports(tmp_path):
    write(
        tmp_path,
        {
            "src/lib/base.py": "import torch\n\nclass Base(torch.nn.Module):\n    pass\n",
            "src/lib/net.py": "from lib.base import Base\n\nclass Net(Base):\n    pass\n",
            "scripts/helper.py": "import torch\n\nclass Helper(torch.nn.Module):\n    pass\n",
            "scripts/run.py": "from helper import Helper\n\nclass Run(Helper):\n    pass\n",
        },
    )
    found = discover(tmp_path, [tmp_path / "src/lib/net.py", tmp_path / "scripts/run.py"])
    assert [(m.target, m.bases) for m in found.modules] == [
        ("scripts/run.py:Run", ("helper.Helper",)),
        ("src/lib/net.py:Net", ("lib.base.Base",)),
    ]


def test_many_files(tmp_path):
    """A sanity check that a 200-file project scans (a chain of bases across files)."""
    files = {"m000.py": "from torch import nn\n\nclass M000(nn.Module):\n    def forward(self, x):\n        return x\n"}
    for i in range(1, 200):
        files[f"m{i:03}.py"] = f"from m{i - 1:03} import M{i - 1:03}\n\nclass M{i:03}(M{i - 1:03}):\n    pass\n"
    write(tmp_path, files)
    found = discover(tmp_path)
    assert len(found.modules) == 200
    assert found.modules[-1].forward.name_span == Span(4, 9, 4, 16)  # from m000.py


def test_does_not_import_torch():
    code = "import sys, exportlens.exporter.find.discover; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


def test_a_file_in_latin_1_is_read_as_python_reads_it(tmp_path):
    (tmp_path / "net.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nfrom torch import nn\n\n\n"
        b"class Net(nn.Module):\n    def forward(self, x):\n        return x  # caf\xe9\n"
    )
    found = discover(tmp_path)
    assert [m.target for m in found.modules] == ["net.py:Net"] and not found.findings


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x)\n        return x\n",
            "syntax error",
        ),
        (b"from torch import nn\n\xff\nclass Net(nn.Module):\n    pass\n", "file is not valid UTF-8"),
        (b"from torch import nn\x00\nclass Net(nn.Module):\n    pass\n", "syntax error"),
    ],
)
def test_a_file_that_does_not_parse_is_its_one_problem(tmp_path, content, message):
    (tmp_path / "pyproject.toml").write_text('[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[2]" }\n')
    (tmp_path / "net.py").write_bytes(content)
    plan = make_plan([tmp_path])
    assert [(f.code, f.path) for f in plan.findings] == [("EL401", "net.py")]  # no "no nn.Module 'Net'" beside it
    assert message in plan.findings[0].message


# generated code Python's own parser gives up on: at module level (MemoryError in 3.11's
# parser), and as a sum of 100,000 terms inside forward (RecursionError building the tree)
TOO_DEEP = {
    "consts.py": "x = " + "-" * 200_000 + "1\n",
    "chain.py": "from torch import nn\n\n\nclass Chain(nn.Module):\n    def forward(self, x):\n"
    "        return x" + " + x" * 100_000 + "\n",
}


def test_a_file_nested_too_deeply_for_python_s_parser_is_a_finding_and_the_scan_goes_on(tmp_path):
    """Each is EL401 on its own file in a check (`exportlens check`, through the index's engine)
    and in the reference scan; the module beside them is found; nothing raises. The editor's
    index, which does not parse function bodies, still lists ``Chain``."""
    for name, text in TOO_DEEP.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "net.py").write_text("from torch import nn\n\n\nclass Net(nn.Module):\n    pass\n")
    expected = [("EL401", "chain.py", 1), ("EL401", "consts.py", 1)]
    for plan in (make_plan([tmp_path], indexed=True), make_plan([tmp_path])):
        assert [(f.code, f.path, f.line) for f in plan.findings] == expected
        assert all("nested too deeply for Python's parser" in f.message for f in plan.findings)
        assert [p.module.name for p in plan.modules] == ["Net"]
    done = subprocess.run(
        [sys.executable, "-m", "exportlens.server.index.scanner", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "EXPORTLENS_INDEX_CACHE": str(tmp_path.parent / "index-cache")},
    )
    assert done.returncode == 0, done.stderr
    entries = dict(entry_of(line) for line in done.stdout.splitlines())
    assert {p.name: [m.name for m in e.modules] for p, e in entries.items() if e.modules} == {
        "chain.py": ["Chain"],
        "net.py": ["Net"],
    }
    assert "Traceback" not in done.stderr  # consts.py defines no class: the index never parses it


def test_a_symlink_loop_is_skipped_by_the_server_s_indexer(tmp_path):
    (tmp_path / "net.py").write_text("from torch import nn\n\n\nclass Net(nn.Module):\n    pass\n")
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "away").symlink_to(tmp_path / "away")
    result = subprocess.run(
        [sys.executable, "-m", "exportlens.server.index.scanner", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert [m.name for line in result.stdout.splitlines() for m in entry_of(line)[1].modules] == ["Net"]
