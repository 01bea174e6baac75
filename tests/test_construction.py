"""Factories, object values in ``init`` and variants, as a user sees them from the CLI:
each mistake refused on its own pyproject.toml line (or the line of the user's code that
raised), and each variant reported as ``path.py:Class[name]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

MODELS = """
import torch


def build_linear(width=4):
    return torch.nn.Linear(width, width)


def build_raising(width=4):
    raise ValueError(f"width {width} is not supported")


def build_dict():
    return {"not": "a module"}


class Stack(torch.nn.Module):
    def __init__(self, layers, scale):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        self.scale = scale

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale["factor"]


class Positions(torch.nn.Module):
    def __init__(self, max_len=16):
        super().__init__()
        self.table = torch.nn.Parameter(torch.zeros(max_len, 4))

    def forward(self, x):
        return x + self.table[: x.shape[0]]
"""

GOOD = """
[tool.exportlens.modules."models/nets.py:linear"]
factory = "models/nets.py:build_linear"
init = { width = 4 }
inputs = { input = "f32[batch, 4]" }

[tool.exportlens.modules."models/nets.py:Stack"]
init = { layers = [{ call = "torch.nn:Linear", kwargs = { in_features = 4, out_features = 4 } }, \
{ call = "models/nets.py:build_linear" }], scale = { factor = 2.0 } }
inputs = { x = "f32[batch, 4]" }

[tool.exportlens.modules."models/nets.py:Positions"]
init = { max_len = 16 }
inputs = { x = "f32[seq, 4]" }

[[tool.exportlens.modules."models/nets.py:Positions".variants]]
name = "short"
dims = { seq = { min = 2, max = 16 } }

[[tool.exportlens.modules."models/nets.py:Positions".variants]]
name = "long"
dims = { seq = { min = 2, max = 64 } }
"""

BAD = """
[tool.exportlens.modules."models/nets.py:missing"]
factory = "models/nets.py:build_nothing"
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:raising"]
factory = "models/nets.py:build_raising"
init = { width = 8 }
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:not_a_module"]
factory = "models/nets.py:build_dict"
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:bad_call"]
factory = "torch.nn:Linear"
init = { in_features = { call = "torch.nn.Linear", kwargs = { a = 1 } }, out_features = 4 }
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:extra_key"]
factory = "torch.nn:Linear"
init = { in_features = { call = "torch.nn:Linear", args = [4] }, out_features = 4 }
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:no_package"]
factory = "nopackage.sub:make"
inputs = { input = "f32[2, 4]" }

[tool.exportlens.modules."models/nets.py:Positions"]
inputs = { x = "f32[seq, 4]" }

[[tool.exportlens.modules."models/nets.py:Positions".variants]]
name = "short"

[[tool.exportlens.modules."models/nets.py:Positions".variants]]
name = "short"
dims = { seq = { max = 64 } }

[[tool.exportlens.modules."models/nets.py:Positions".variants]]
dims = { seq = { max = 8 } }
"""


def check(root: Path, spec: str, *args: str) -> subprocess.CompletedProcess[str]:
    (root / "models").mkdir(exist_ok=True)
    (root / "models" / "nets.py").write_text(MODELS)
    (root / "pyproject.toml").write_text(spec)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", str(root), "--jobs", "1", *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> str:
    done = check(tmp_path_factory.mktemp("bad"), BAD)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_factories_object_values_and_variants_export_each_reported_by_name(tmp_path):
    done = check(tmp_path, GOOD, "--format", "json")
    modules = {m["target"]: m for m in json.loads(done.stdout)["modules"]}
    assert {t: m["status"] for t, m in modules.items()} == {
        "models/nets.py:linear": "exported",
        "models/nets.py:Stack": "exported",
        "models/nets.py:Positions[short]": "exported",
        "models/nets.py:Positions[long]": "failed",
    }
    (finding,) = modules["models/nets.py:Positions[long]"]["findings"]
    assert finding["message"] == (
        "Positions[long]: `seq` is declared as [2, 64], but this line requires `seq <= 16` (`self.table` has 16 rows)"
    )
    (fix,) = [f for f in finding["fixes"] if f["preferred"]]
    (edit,) = fix["edits"]  # the long variant's own max, not the class table's
    assert edit["line"] == line_of(GOOD, "max = 64") and edit["new_text"] == "16"


@pytest.mark.slow
def test_a_missing_factory_is_refused_on_its_line(bad):
    line = line_of(BAD, "build_nothing")
    message = "EL403 factory 'models/nets.py:build_nothing' does not exist: models/nets.py has no 'build_nothing'"
    assert f"pyproject.toml:{line}:1: {message}" in bad
    line = line_of(BAD, "nopackage")
    assert (
        f"pyproject.toml:{line}:1: EL403 factory 'nopackage.sub:make' does not exist:"
        " no module named 'nopackage' can be imported"
    ) in bad


@pytest.mark.slow  # alone among its file's quick tests, it would start the file's whole check
def test_a_factory_that_raises_is_reported_on_the_line_that_raised(bad):
    line = line_of(MODELS, "raise ValueError")
    assert f"models/nets.py:{line}:1: EL403 build_raising(width=8) failed: ValueError: width 8 is not supported" in bad


def test_a_factory_that_returns_no_module_says_what_it_returned(bad):
    line = line_of(BAD, "build_dict")
    message = (
        "EL403 factory 'models/nets.py:build_dict' returned a dict, not an nn.Module:"
        " a factory must return the module to export"
    )
    assert f"pyproject.toml:{line}:1: {message}" in bad


def test_a_malformed_object_value_is_a_spec_error_on_its_line(bad):
    line = line_of(BAD, 'call = "torch.nn.Linear"')
    message = (
        "init.in_features: call 'torch.nn.Linear' must look like 'package.module:name' (importable)"
        " or 'path/to/file.py:name'"
    )
    assert f"pyproject.toml:{line}:10: EL005 {message}" in bad
    line = line_of(BAD, "args = [4]")
    assert (
        f"pyproject.toml:{line}:10: EL005 init.in_features: an object value takes only `call` and `kwargs`, not args"
        in bad
    )


def test_duplicate_and_missing_variant_names_are_spec_errors(bad):
    second = [i for i, text in enumerate(BAD.splitlines(), 1) if text.startswith("[[")][1]
    message = (
        "EL005 variant name 'short' is used twice for models/nets.py:Positions: each variant needs a name of its own"
    )
    assert f"pyproject.toml:{second}:1: {message}" in bad
    third = [i for i, text in enumerate(BAD.splitlines(), 1) if text.startswith("[[")][2]
    assert (
        f"pyproject.toml:{third}:1: EL005 a variant of models/nets.py:Positions has no name:"
        ' give each one name = "small"'
    ) in bad
