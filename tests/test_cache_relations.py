"""A KV cache written at an int position, as Meta's reference Llama does (issue 35): what
must fit is `start_pos + seq`, a relation of two dims, and torch says it in ways that hide
that. Its range guard is a conjunction (`seq + start_pos >= 0 and seq + start_pos <= 64`)
blaming `seq` alone, as an int input's dim gets no violation of its own; and with ranges
whose sum is exactly the cache, the program refuses that one sum (`seq + start_pos == 64`,
the slice to the cache's end), which eager runs. Each is said as the one relation, with the
fix that keeps both dims dynamic, proven at every corner of the ranges it leaves."""

from __future__ import annotations

import pytest
import torch
from conftest import only
from test_corners import SERVES, apply_preferred, check, declared, serves_every_corner
from torch.export import Dim

CACHE = """
import torch
from torch import nn


class {name}(nn.Module):
    \"\"\"The new keys written at `start_pos` in a cache of 64, then every key so far read back.\"\"\"

    def __init__(self, dim: int = 16, max_batch_size: int = 4, max_seq_len: int = 64):
        super().__init__()
        self.wk = nn.Linear(dim, dim, bias=False)
        self.register_buffer("cache_k", torch.zeros(max_batch_size, max_seq_len, dim))

    def forward(self, x, start_pos: int):
        bsz, seqlen, _ = x.shape
        cache_k = self.cache_k.clone()
        cache_k[:bsz, start_pos : start_pos + seqlen] = self.wk(x)
        keys = cache_k[:bsz, : start_pos + seqlen]
        return x @ keys.transpose(1, 2)
"""


def spec(name: str, seq: int, start_pos: int) -> str:
    dims = "batch = { min = 1, max = 4 }, "
    dims += f"seq = {{ min = 1, max = {seq} }}, start_pos = {{ min = 0, max = {start_pos} }}"
    return f"""
        [tool.exportlens.modules."cache.py:{name}"]
        inputs = {{ x = "f32[batch, seq, 16]", start_pos = "int[start_pos]" }}
        dims = {{ {dims} }}
        """


def cache_inputs(at: dict[str, int]) -> tuple:
    return torch.randn(at["batch"], at["seq"], 16), at["start_pos"]


def cache_shapes(dims: dict) -> tuple:
    pos = dims["start_pos"]  # torch takes no named Dim for an int: the hint, with its bounds
    return {0: dims["batch"], 1: dims["seq"]}, Dim.DYNAMIC(min=pos.min, max=pos.max)


def test_a_cache_written_at_an_int_position_is_one_relation_cut_together(project):
    """seq up to 64 and start_pos up to 63 in a cache of 64: one EL201 naming both dims with
    the bound a declared size breaks, `seq + start_pos <= 64` (not the half every size meets),
    and first the fix that cuts both maxima so that the sum fits."""
    project.write("cache.py", CACHE.format(name="PositionWrite"))
    project.write("pyproject.toml", spec("PositionWrite", 64, 63))
    finding = only(project.module("PositionWrite").findings, "EL201")
    assert finding.message == (
        "`seq` and `start_pos` are declared as [1, 64] and [0, 63], but this line requires `seq + start_pos <= 64`"
    ), finding.message
    assert set(finding.dims) == {"seq", "start_pos"}
    [fix] = [f for f in finding.fixes if f.preferred]
    assert fix.action == "Set `seq` to Dim('seq', max=32) and set `start_pos` to Dim('start_pos', max=32)", fix.action


@pytest.mark.slow
def test_a_program_that_refuses_the_sum_at_the_cache_end_says_the_relation_and_serves_its_cut(project):
    """seq up to 16 and start_pos up to 48: exactly the cache. torch's program refuses
    `seq + start_pos == 64`, which eager runs: one EL206 says `seq + start_pos <= 63` over both
    dims (not `batch`), its preferred fix keeps both dynamic and serves every corner."""
    project.write("cache.py", CACHE.format(name="EdgeWrite"))
    project.write("pyproject.toml", spec("EdgeWrite", 16, 48))
    code, report = check(project.root)
    [finding] = report["modules"][0]["findings"]
    assert code == 1 and finding["code"] == "EL206", report
    assert finding["message"].startswith(
        "`seq` is declared as [1, 16], `start_pos` as [0, 48], but the exported program requires"
        " `seq + start_pos <= 63`: it refuses sizes where `seq + start_pos == 64`"
    ), finding["message"]
    title = apply_preferred(project, finding)
    assert title.endswith(SERVES) and "static" not in title, title
    ranges = declared(project, "cache.py:EdgeWrite")
    assert ranges["batch"] == (1, 4) and ranges["start_pos"][1] + ranges["seq"][1] <= 63, ranges
    assert min(r[1] for r in ranges.values()) > 1, ranges
    assert serves_every_corner(project.root / "cache.py", "EdgeWrite", ranges, cache_inputs, cache_shapes) == []


@pytest.mark.slow
def test_the_shared_cut_of_an_int_position_serves_every_corner(project):
    """The cache write's preferred fix from seq up to 64 and start_pos up to 63, proven by the
    CLI (the sum cut, then the edge the program refuses): both stay dynamic, every corner served."""
    project.write("cache.py", CACHE.format(name="PositionCorners"))
    project.write("pyproject.toml", spec("PositionCorners", 64, 63))
    code, report = check(project.root)
    assert code == 1, report
    title = apply_preferred(project, report["modules"][0]["findings"][0])
    assert title.endswith(SERVES) and "static" not in title, title
    ranges = declared(project, "cache.py:PositionCorners")
    assert ranges["start_pos"][1] + ranges["seq"][1] <= 64 and min(r[1] for r in ranges.values()) > 1, ranges
    assert serves_every_corner(project.root / "cache.py", "PositionCorners", ranges, cache_inputs, cache_shapes) == []


PREFILL = CACHE.replace(
    "        return x @ keys.transpose(1, 2)\n",
    """        mask = torch.full((seqlen, seqlen), float("-inf")).triu(1)
        mask = torch.hstack([torch.zeros(seqlen, start_pos), mask])
        return x @ keys.transpose(1, 2) + mask
""",
)


@pytest.mark.slow
def test_a_refused_prefill_does_not_hide_the_sum_refused_at_the_cache_end(project):
    """Meta's mask refuses the prefill (`start_pos == 0`, one dim at its bound) and the cache
    read refuses `seq + start_pos == 64` (both at their maxima): two problems, both shown,
    the prefill's first with its pad, the relation's with a cut that keeps both dynamic."""
    project.write("cache.py", PREFILL.format(name="PrefillWrite"))
    project.write("pyproject.toml", spec("PrefillWrite", 16, 48))
    code, report = check(project.root)
    prefill, relation = report["modules"][0]["findings"]
    assert code == 1 and (prefill["code"], relation["code"]) == ("EL206", "EL206"), report
    assert "refuses sizes where `start_pos == 0`" in prefill["message"], prefill["message"]
    assert "requires `seq + start_pos <= 63`" in relation["message"], relation["message"]
    [fix] = [f for f in relation["fixes"] if f["preferred"]]
    assert fix["title"].startswith("Set `start_pos` to Dim('start_pos', max=47)") and SERVES in fix["title"], fix
