"""Python's ``max`` over a tensor read as a size, ``int(max(lengths).item())`` (issue 36):
torch.export traces the builtin as ``torch.maximum`` of one argument and raises TypeError,
though eager runs. The finding names the call, and the preferred fix writes
``lengths.max()``, then the ``int(...)`` of the value read as ``torch.sym_int(...)``,
proven by exporting, serving and agreeing with eager."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checked

from exportlens.exporter.edit.builtin_reductions import as_reductions

TRIMMED = """\
import torch
from torch import nn


class Trim(nn.Module):
    def forward(self, tokens, counts):
        widest = int(max(counts).item())
        return tokens[:, :widest].sum(-1)
"""

SPEC = """
[tool.exportlens.modules."trim.py:Trim"]
inputs = { tokens = "f32[2, 10]", counts = "i64[2]" }
"""


def test_a_builtin_max_of_a_tensor_is_written_as_its_reduction():
    found = as_reductions(TRIMMED, 7)
    assert found is not None
    assert (found.written, found.rewritten) == ("max(counts)", "counts.max()")
    assert "        widest = int(counts.max().item())\n" in found.text
    assert as_reductions("y = min(self.scale)\n", 1).rewritten == "self.scale.min()"


@pytest.mark.parametrize("line", ["y = max(a, b)\n", "y = max(x for x in xs)\n", "y = max(*xs)\n", "y = xs.max()\n"])
def test_other_calls_are_left_as_they_are(line: str):
    assert as_reductions(line, 1) is None


@pytest.mark.slow
def test_a_builtin_max_read_as_a_size_is_named_and_rewritten_until_it_exports(tmp_path: Path):
    (tmp_path / "trim.py").write_text(TRIMMED, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")
    [module] = checked(tmp_path)
    [finding] = module["findings"]
    assert (finding["code"], finding["line"]) == ("EL305", 7)
    assert finding["message"].startswith("`max(counts)` is Python's builtin over a tensor's elements")
    [preferred] = [f for f in finding["fixes"] if f["preferred"]]
    assert preferred["title"].startswith("Write `counts.max()` for `max(counts)`"), preferred["title"]
    assert "torch.sym_int" in preferred["title"]
    assert (preferred["verified"], preferred["remaining"]) == ("serves", 0)
    assert preferred["probes"] and all(p["agrees"] for p in preferred["probes"]), preferred["probes"]
