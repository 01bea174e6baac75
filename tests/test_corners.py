"""'Serves its ranges' holds at every corner of the declared box, not only at each bound.

A KV cache of 256 positions serves `past_len` up to 255 with `new_len` at its example, and
`new_len` up to 255 with `past_len` at its: the sum is what must fit. The program is run at
the corners where dims are at their bounds together, and a fix says it serves its ranges only
when it serves them all. Each case is checked the way its user meets it (a real CLI check,
with the owner's proofs), the preferred fix applied as an editor would, and every corner of
the ranges it leaves is then run here, by the test itself, on eager and on the program."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import torch
from conftest import only
from torch.export import Dim

from exportlens.exporter.core.report import Edit, Status
from exportlens.exporter.edit.text_edits import apply_edits
from exportlens.exporter.runtime.proving.corners import corners, singles, toward

REPO = Path(__file__).resolve().parent.parent
SERVES = "(module then exports and serves its ranges)"

KV = """
import torch
from torch import nn


class KVAttention(nn.Module):
    \"\"\"Attention over a fixed-size cache of 256 positions: the new keys go after the past.\"\"\"

    def __init__(self, dim: int = 16, cache: int = 256):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("k_cache", torch.zeros(1, cache, dim))
        self.register_buffer("v_cache", torch.zeros(1, cache, dim))

    def forward(self, x, past):
        past_len, new_len = past.shape[1], x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        keys = torch.cat([self.k_cache[:, :past_len], k], dim=1)
        values = torch.cat([self.v_cache[:, :past_len], v], dim=1)
        mask = torch.ones(past_len + new_len, device=x.device)[: self.k_cache.shape[1]]
        scores = q @ keys.transpose(1, 2) * mask
        return scores.softmax(-1) @ values
"""

LLAMA = """
import math

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    \"\"\"Llama-style attention with a KV cache: `start_pos` is where the new tokens go.\"\"\"

    def __init__(self, dim: int = 32, n_heads: int = 4, max_batch: int = 8, max_seq: int = 128):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.register_buffer("cache_k", torch.zeros(max_batch, max_seq, n_heads, self.head_dim))
        self.register_buffer("cache_v", torch.zeros(max_batch, max_seq, n_heads, self.head_dim))

    def forward(self, x, start_pos: int):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        cache_k, cache_v = self.cache_k.clone(), self.cache_v.clone()
        cache_k[:bsz, start_pos : start_pos + seqlen] = xk
        cache_v[:bsz, start_pos : start_pos + seqlen] = xv
        keys = cache_k[:bsz, : start_pos + seqlen].transpose(1, 2)
        values = cache_v[:bsz, : start_pos + seqlen].transpose(1, 2)
        scores = xq.transpose(1, 2) @ keys.transpose(2, 3) / math.sqrt(self.head_dim)
        mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device).triu(1)
        mask = torch.hstack([torch.zeros(seqlen, start_pos, device=x.device), mask])
        out = F.softmax(scores + mask, dim=-1) @ values
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))
"""


def check(root: Path) -> tuple[int, dict]:
    """`exportlens check --format json .` in ``root``, as CI runs it: exit code and report."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", "--format", "json", "."]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.stdout.startswith("{"), done.stderr[-2000:]
    return done.returncode, json.loads(done.stdout)


def apply_preferred(project, finding: dict) -> str:
    """Apply the finding's preferred fix as an editor would; its title."""
    [fix] = [f for f in finding["fixes"] if f["preferred"]] or [None]
    assert fix is not None, [f["title"] for f in finding["fixes"]]
    edits = [Edit(**e) for e in fix["edits"]]
    for path in {e.path for e in edits}:
        text = apply_edits(project.read(path), [e for e in edits if e.path == path])
        (project.root / path).write_text(text, encoding="utf-8")
    return fix["title"]


def declared(project, target: str) -> dict[str, tuple[int, int]]:
    """Each dim's range as the pyproject now declares it."""
    table = tomllib.loads(project.read("pyproject.toml"))["tool"]["exportlens"]["modules"][target]["dims"]
    return {name: (d["min"], d["max"]) for name, d in table.items()}


def serves_every_corner(path: Path, cls: str, ranges: dict[str, tuple[int, int]], inputs, shapes) -> list[str]:
    """Where the program exported under ``ranges`` and eager disagree (one fails, or their
    outputs differ), over every corner of the box: empty where it serves them all."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = getattr(module, cls)().eval()
    dims = {n: Dim(n, min=lo, max=hi) for n, (lo, hi) in ranges.items()}
    middle = {n: (lo + hi) // 2 for n, (lo, hi) in ranges.items()}
    program = torch.export.export(model, inputs(middle), dynamic_shapes=shapes(dims)).module()
    wrong = []
    for sizes in itertools.product(*ranges.values()):
        at = dict(zip(ranges, sizes))
        args = inputs(at)
        try:
            torch.testing.assert_close(program(*args), model(*args))
        except Exception as exc:
            wrong.append(f"{at}: {type(exc).__name__}: {str(exc)[:200]}")
    return wrong


def kv_inputs(at: dict[str, int]) -> tuple:
    return torch.randn(1, at["new_len"], 16), torch.randn(1, at["past_len"])


def kv_shapes(dims: dict) -> tuple:
    return {1: dims["new_len"]}, {1: dims["past_len"]}


def test_the_box_is_run_at_every_corner_up_to_four_dims_and_at_pairs_a_guard_names_beyond():
    """The corners tried (no torch): all 2^k for k <= 4, the corner of every maximum first;
    beyond four dims, the corners of the pairs a guard names together."""
    bounds = {"past_len": (255, 1), "new_len": (255, 1)}
    assert singles(bounds) == [(("past_len", 255),), (("past_len", 1),), (("new_len", 255),), (("new_len", 1),)]
    assert corners(bounds, []) == [
        (("past_len", 255), ("new_len", 255)),
        (("past_len", 255), ("new_len", 1)),
        (("past_len", 1), ("new_len", 255)),
        (("past_len", 1), ("new_len", 1)),
    ]
    assert len(corners({n: (8, 1) for n in "abcd"}, [])) == 16
    five = {n: (8, 1) for n in "abcde"}
    assert corners(five, []) == []
    assert corners(five, [("e", "b")]) == [
        (("b", 8), ("e", 8)),
        (("b", 8), ("e", 1)),
        (("b", 1), ("e", 8)),
        (("b", 1), ("e", 1)),
    ]
    # the cut of a corner moves every dim in proportion, never past the point that worked
    assert toward({"a": 8, "b": 4}, (("a", 255), ("b", 1)), 1, 2) == (("a", 131), ("b", 3))


def test_a_program_that_fails_only_where_two_dims_are_large_together_does_not_serve(project):
    """Each bound alone serves (past 120 with new at its example, new 120 with past at its);
    at past_len = 160, new_len = 120 together the sum overflows the cache: EL206 says so on the
    spec, and its fix cuts both ranges so that the sum fits."""
    project.write("kv.py", KV)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."kv.py:KVAttention"]
        inputs = { x = "f32[1, new_len, 16]", past = "f32[1, past_len]" }
        dims = { past_len = { min = 1, max = 160 }, new_len = { min = 1, max = 120 } }
        """,
    )
    report = project.module("KVAttention")
    assert report.status is Status.FAILED
    finding = only(report.findings, "EL206")
    assert "together" in finding.message and "past_len = 160" in finding.message, finding.message
    [fix] = [f for f in finding.fixes if f.preferred]
    assert "`new_len`" in fix.action and "`past_len`" in fix.action, fix.action


WRITTEN = """
import torch
from torch import nn


class CacheWrite(nn.Module):
    def __init__(self, dim: int = 16, cache: int = 256):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("cache", torch.zeros(1, cache, dim))

    def forward(self, x, past):
        start, new_len = past.shape[1], x.shape[1]
        cache = self.cache.clone()
        cache[:, start : start + new_len] = self.proj(x)
        return cache[:, : start + new_len].sum(1)
"""


def test_a_relation_of_two_dims_is_said_once_naming_both(project):
    """The new keys written after the past in a cache of 256 (as in pytorch/executorch#7927,
    where the input's length and the cache's are what must fit together): one finding says
    `new_len + past_len <= 256` with both declared ranges, not one finding per dim; its
    preferred fix keeps both dynamic and serves its ranges."""
    project.write("written.py", WRITTEN)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."written.py:CacheWrite"]
        inputs = { x = "f32[1, new_len, 16]", past = "f32[1, past_len]" }
        dims = { past_len = { min = 1, max = 255 }, new_len = { min = 1, max = 255 } }
        """,
    )
    finding = only(project.module("CacheWrite").findings, "EL201")
    assert finding.message == (
        "`new_len` and `past_len` are declared as [1, 255] and [1, 255],"
        " but this line requires `new_len + past_len <= 256`"
    ), finding.message
    assert set(finding.dims) == {"new_len", "past_len"}
    [fix] = [f for f in finding.fixes if f.preferred]
    assert "`new_len`" in fix.action and "`past_len`" in fix.action and "static" not in fix.action, fix.action


@pytest.mark.slow
def test_the_shared_cut_of_a_relation_serves_every_corner(project):
    """The cache write's preferred fix, proven by the CLI, keeps both dims dynamic with maxima
    whose sum fits the cache, and the program serves every corner of the ranges it leaves."""
    project.write("written.py", WRITTEN.replace("CacheWrite", "CacheWriteCorners"))
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."written.py:CacheWriteCorners"]
        inputs = { x = "f32[1, new_len, 16]", past = "f32[1, past_len]" }
        dims = { past_len = { min = 1, max = 255 }, new_len = { min = 1, max = 255 } }
        """,
    )
    code, report = check(project.root)
    assert code == 1 and len(report["modules"][0]["findings"]) == 1, report
    title = apply_preferred(project, report["modules"][0]["findings"][0])
    assert title == (
        "Set `new_len` to Dim('new_len', max=128) and set `past_len` to Dim('past_len', max=128) " + SERVES
    ), title
    ranges = declared(project, "written.py:CacheWriteCorners")
    assert serves_every_corner(project.root / "written.py", "CacheWriteCorners", ranges, kv_inputs, kv_shapes) == []


FIVE = """
import torch
from torch import nn


class Five(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(64, 4))

    def forward(self, a, b, c, d, e):
        both = torch.cat([a, b], dim=0)
        return both * self.cache[: both.shape[0]], c.sum() + d.sum() + e.sum()
"""


def test_beyond_four_dims_the_pair_a_guard_names_is_run_at_its_corners(project):
    """Five dims with bounds (32 corners are too many): `na` and `nb`, which a guard of the
    export names together, are run large together, and fail there."""
    project.write("five.py", FIVE)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."five.py:Five"]
        inputs = { a = "f32[na, 4]", b = "f32[nb, 4]", c = "f32[nc]", d = "f32[nd]", e = "f32[ne]" }
        dims = { na = { max = 40 }, nb = { max = 40 }, nc = { max = 9 }, nd = { max = 9 }, ne = { max = 9 } }
        """,
    )
    finding = only(project.module("Five").findings, "EL206")
    assert "at na = 40, nb = 40 together forward fails" in finding.message, finding.message
    [fix] = [f for f in finding.fixes if f.preferred]
    assert fix.action == "Set `na` to Dim('na', max=32) and set `nb` to Dim('nb', max=32)"


@pytest.mark.slow
def test_the_kv_cache_fix_serves_every_corner_of_its_ranges(project):
    """The newcomer's KV cache: the preferred fix says it serves its ranges, and at every
    corner of the ranges it leaves (both dims large together too) the program is eager."""
    project.write("kv.py", KV)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."kv.py:KVAttention"]
        inputs = { x = "f32[1, new_len, 16]", past = "f32[1, past_len]" }
        dims = { past_len = { min = 1, max = 255 }, new_len = { min = 1, max = 255 } }
        """,
    )
    code, report = check(project.root)
    assert code == 1
    title = apply_preferred(project, report["modules"][0]["findings"][0])
    assert title.endswith(SERVES), title
    ranges = declared(project, "kv.py:KVAttention")
    assert ranges["past_len"][1] + ranges["new_len"][1] <= 256 and min(r[1] for r in ranges.values()) > 64, ranges
    assert serves_every_corner(project.root / "kv.py", "KVAttention", ranges, kv_inputs, kv_shapes) == []
    code, after = check(project.root)
    assert (code, [m["status"] for m in after["modules"]]) == (0, ["exported"]), after


def llama_inputs(at: dict[str, int]) -> tuple:
    return torch.randn(at["batch"], at["seq"], 32), at["start_pos"]


def llama_shapes(dims: dict) -> tuple:
    pos = dims["start_pos"]  # torch takes no named Dim for an int: the hint, with its bounds
    return {0: dims["batch"], 1: dims["seq"]}, Dim.DYNAMIC(min=pos.min, max=pos.max)


@pytest.mark.slow
def test_the_llama_block_fix_serves_every_corner_of_its_ranges(project):
    """A Llama-style block: `start_pos + seq` must fit the cache of 128. Its preferred fix
    serves every corner of the ranges it leaves (`batch` is not cut: it takes no part), the
    prefill `start_pos = 0` among them: the mask's zeros block is written as a pad (issue 35)."""
    project.write("llama.py", LLAMA)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."llama.py:Attention"]
        inputs = { x = "f32[batch, seq, 32]", start_pos = "int[start_pos]" }
        dims = { batch = { min = 1, max = 8 }, seq = { min = 1, max = 64 }, start_pos = { min = 0, max = 127 } }
        """,
    )
    code, report = check(project.root)
    assert code == 1
    title = apply_preferred(project, report["modules"][0]["findings"][0])
    assert title.endswith(SERVES), title
    ranges = declared(project, "llama.py:Attention")
    assert ranges["batch"] == (1, 8) and ranges["start_pos"][1] + ranges["seq"][1] <= 128, ranges
    assert ranges["start_pos"][0] == 0, (title, ranges)
    assert serves_every_corner(project.root / "llama.py", "Attention", ranges, llama_inputs, llama_shapes) == []
    code, after = check(project.root)
    assert (code, [m["status"] for m in after["modules"]]) == (0, ["exported"]), after
