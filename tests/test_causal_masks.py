"""``is_causal=`` given a test of sizes, written as the causal mask (edit/causal_masks.py, issue 36):
the rewrite alone, on text. Proven end to end by the corpus case unsupported_sdpa_is_causal.py
(its preferred fix exports, serves its ranges and agrees with eager on its probes)."""

from __future__ import annotations

import textwrap

import pytest

from exportlens.exporter.edit.causal_masks import causal_mask

ATTENTION = """
from torch.nn import functional as F


def attend(q, kv):
    causal = q.shape[2] > 1
    return F.scaled_dot_product_attention(q, kv, kv, is_causal=causal)
"""


def test_a_computed_is_causal_is_written_as_the_mask_it_means():
    text = textwrap.dedent(ATTENTION).lstrip()
    found = causal_mask(text, 6)
    assert found is not None
    assert found.written == "is_causal=causal"
    assert found.rewritten == (
        "attn_mask=torch.ones(q.shape[-2], kv.shape[-2], dtype=torch.bool, device=q.device).tril()"
    )
    assert found.text == "import torch\n" + text.replace(found.written, found.rewritten)


@pytest.mark.parametrize(
    "call",
    [
        "F.scaled_dot_product_attention(q, kv, kv, is_causal=True)",  # a constant: torch takes it as it is
        "F.scaled_dot_product_attention(q, kv, kv, attn_mask=m, is_causal=causal)",  # a mask given already
        "F.scaled_dot_product_attention(q * 2, kv, kv, is_causal=causal)",  # the query a computation
        "F.scaled_dot_product_attention(q, kv, kv)",
    ],
)
def test_other_calls_are_left_as_they_are(call: str):
    text = f"def attend(q, kv, m, causal):\n    return {call}\n"
    assert causal_mask(text, 2) is None
