"""An early ``return x`` under a value test on a mask (issue 36): ``if not keep.any(): return
feats``. Where the code after it gives the same there (a ``masked_fill`` of an empty mask),
dropping the test is the fix, proven on probes that take each side; where it does not, the
drop disagrees with eager and is never preferred."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checked

from exportlens.exporter.edit.branch_rewrites import without_branch

GATES = """\
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, feats, drop):
        if not drop.any():
            return feats
        return feats.masked_fill(drop[..., None], -1.0)


class Doubler(nn.Module):
    def forward(self, feats, drop):
        if not drop.any():
            return feats
        return feats * 2
"""

SPEC = """
[tool.exportlens.modules."gates.py:Gate"]
inputs = { feats = "f32[3, 7, 2]", drop = "bool[3, 7]" }

[tool.exportlens.modules."gates.py:Doubler"]
inputs = { feats = "f32[3, 7, 2]", drop = "bool[3, 7]" }
"""


def test_an_early_return_of_a_name_is_dropped_with_its_test():
    new, how = without_branch(GATES, 7)
    assert how == "early"
    assert "if not drop.any():" not in new.split("class Doubler")[0]
    assert "        return feats.masked_fill(drop[..., None], -1.0)\n" in new


@pytest.mark.slow
def test_the_early_return_is_dropped_only_where_the_code_after_it_gives_the_same(tmp_path: Path):
    (tmp_path / "gates.py").write_text(GATES, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")
    modules = {m["target"]: m for m in checked(tmp_path)}
    [gate] = modules["gates.py:Gate"]["findings"]
    assert (gate["code"], gate["line"]) == ("EL101", 7)
    assert "`not drop.any()`" in gate["message"]
    [preferred] = [f for f in gate["fixes"] if f["preferred"]]
    assert preferred["title"].startswith("Drop the early return under `if not drop.any():`"), preferred["title"]
    assert (preferred["verified"], preferred["remaining"]) == ("serves", 0)
    assert all(p["agrees"] for p in preferred["probes"]), preferred["probes"]
    [doubler] = modules["gates.py:Doubler"]["findings"]
    assert not any(f["preferred"] and f["title"].startswith("Drop the early return") for f in doubler["fixes"])
