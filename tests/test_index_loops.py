"""A loop over the indices ``nonzero()`` finds, written as a loop over every index of the mask
(edit/index_loops.py, issue 36): the rewrite alone, on text. Proven end to end by the corpus
case data_moe_expert_hit.py (its preferred fix exports, serves and agrees with eager on probes
where some experts get no token)."""

from __future__ import annotations

import pytest

from exportlens.exporter.edit.index_loops import every_index

ROUTED = """def route(self, x, chosen):
    hit = chosen.bincount(minlength=4).gt(0).nonzero()
    for e in hit:
        x = x + self.experts[int(e)](x)
    return x
"""


def test_a_loop_over_a_name_bound_to_nonzero_loops_over_every_index_of_the_mask():
    found = every_index(ROUTED, 3)
    assert found is not None
    assert (found.mask, found.written, found.rewritten) == (
        "chosen.bincount(minlength=4).gt(0)",
        "for e in hit:",
        "for e in range(hit.shape[0]):",
    )
    assert found.text == ROUTED.replace(".gt(0).nonzero()", ".gt(0)").replace("in hit:", "in range(hit.shape[0]):")


def test_a_loop_over_nonzero_itself_loops_over_every_index():
    text = "def f(mask, x):\n    for i in mask.nonzero():\n        x = x + i\n    return x\n"
    found = every_index(text, 2)
    assert found is not None and found.text == text.replace("mask.nonzero()", "range(mask.shape[0])")


@pytest.mark.parametrize(
    "body",
    [
        "    hit = mask.nonzero()\n    for e in hit:\n        x = x + e\n    return x, hit\n",  # ``hit`` read again
        "    hit = mask.nonzero(as_tuple=True)\n    for e in hit:\n        x = x + e\n    return x\n",
        "    for e in mask:\n        x = x + e\n    return x\n",  # not the indices nonzero() finds
        "    for a, b in mask.nonzero():\n        x = x + a\n    return x\n",  # rows of several indices
    ],
)
def test_other_loops_are_left_as_they_are(body: str):
    text = "def f(mask, x):\n" + body
    line = next(i for i, code in enumerate(text.splitlines(), 1) if code.lstrip().startswith("for "))
    assert every_index(text, line) is None
