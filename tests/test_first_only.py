"""`exportlens check --first-only` gives verdicts only (issue 40): the plain export's answer
for each module, without the run at the declared bounds, the fixes' proofs or the draft
export; the same project checked in full still says all of it."""

from __future__ import annotations

import textwrap

import pytest
from conftest import checked

pytestmark = pytest.mark.slow  # two whole CLI checks

TABLE = """
import torch
from torch import nn


class Table(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.zeros(48, 4))

    def forward(self, a, b):
        both = torch.cat([a, b], dim=0)
        return both * self.rows[: both.shape[0]]


class Rows(nn.Module):
    def forward(self, x):
        return x.view(4, -1)
"""

SPEC = """
[tool.exportlens.modules."table.py:Table"]
inputs = { a = "f32[na, 4]", b = "f32[nb, 4]" }
dims = { na = { max = 40 }, nb = { max = 40 } }

[tool.exportlens.modules."table.py:Rows"]
inputs = { x = "f32[batch, 8]" }
dims = { batch = { max = 16, example = 4 } }
"""


def _check(root, *flags):
    return {m["target"].split(":")[-1]: m for m in checked(root, *flags)}


def test_first_only_says_each_verdict_and_leaves_the_bounds_run_and_proofs_to_the_full_check(tmp_path):
    (tmp_path / "table.py").write_text(textwrap.dedent(TABLE).lstrip(), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")

    quick = _check(tmp_path, "--first-only")
    assert quick["Table"]["status"] == "exported" and not quick["Table"]["findings"]
    assert quick["Rows"]["status"] == "failed"
    [finding] = quick["Rows"]["findings"]
    assert finding["line"] == 17 and finding["fixes"]
    assert not any(f["preferred"] for f in finding["fixes"])  # nothing proven, so nothing preferred

    full = _check(tmp_path)
    [bound] = full["Table"]["findings"]
    assert bound["code"] == "EL206" and "na = 40, nb = 40" in bound["message"], bound["message"]
    [finding] = full["Rows"]["findings"]
    assert any(f["preferred"] for f in finding["fixes"])
