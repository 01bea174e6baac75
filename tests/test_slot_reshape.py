"""A number that is the model's choice, not an input's size (issue 35's real repositories): a
pooled reshape into 16 slots, `hidden.reshape(batch, 16, -1)`, guards `seq % 16 != 0` on
the example. The message says that guard and no bounds it is not ("i.e. `seq <= 15`"
named only the first run of sizes where it holds), and writing the sequence's size for the
16 is never offered as proven: on the example inputs it answers otherwise than the module
as written (16 slots become `seq` slots)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checked

pytestmark = pytest.mark.slow  # a whole CLI check with its proofs

SLOTS = """\
import torch
from torch import nn


class SlotPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)

    def forward(self, x):
        hidden = self.proj(x)
        return hidden.reshape(hidden.shape[0], 16, -1)
"""

SPEC = """
[tool.exportlens.modules."slots.py:SlotPool"]
inputs = { x = "f32[batch, seq, 64]" }
dims = { batch = { max = 8 }, seq = { min = 2, max = 128, example = 12 } }
"""


def test_a_reshape_into_a_fixed_number_of_slots_is_said_as_its_guard_and_not_rewritten(tmp_path: Path) -> None:
    (tmp_path / "slots.py").write_text(SLOTS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")
    [module] = checked(tmp_path)
    [finding] = module["findings"]
    assert finding["line"] == 12
    assert finding["message"].endswith("but this line requires `seq % 16 != 0`"), finding["message"]
    assert "i.e." not in finding["message"]
    preferred = [f["title"] for f in finding["fixes"] if f["preferred"]]
    assert not any("for the `16`" in title for title in preferred), preferred
