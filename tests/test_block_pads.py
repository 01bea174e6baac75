"""A constant block joined to a tensor (issue 35): Meta's reference Llama builds its mask as
``torch.hstack([torch.zeros(seqlen, start_pos), mask])``, and torch.export decides while
making the block that its size is neither 0 nor 1, so the program refuses the prefill
(``start_pos = 0``). The fix writes the line as a pad of the other tensor, the same tensor
with no such guard: the rewrite itself (no torch), real exports of what it writes, and the
finding that offers it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from conftest import only
from torch.export import Dim

from exportlens.exporter.core.report import Narrowing
from exportlens.exporter.edit.block_pads import block_pad

MASK = """\
import torch
import torch.nn.functional as F
from torch import nn


class PrefillMask(nn.Module):
    # one head over a cache of 64 positions; the new keys go at start_pos

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 64, 8))

    def forward(self, x, start_pos: int):
        seqlen = x.shape[1]
        cache = self.cache.clone()
        cache[:, start_pos : start_pos + seqlen] = x
        keys = cache[:, : start_pos + seqlen]
        mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device).triu(1)
        mask = torch.hstack([torch.zeros(seqlen, start_pos, device=x.device), mask])
        return F.softmax(x @ keys.transpose(1, 2) + mask, dim=-1) @ keys
"""

SPEC = """
[tool.exportlens.modules."mask.py:PrefillMask"]
inputs = { x = "f32[2, seq, 8]", start_pos = "int[start_pos]" }
dims = { seq = { min = 1, max = 16, example = 3 }, start_pos = { min = 0, max = 40, example = 5 } }
"""


def test_the_llama_mask_is_written_as_a_pad_in_the_files_own_names():
    found = block_pad(MASK, 19)
    assert found is not None
    assert (found.written, found.rewritten) == (
        "torch.hstack([torch.zeros(seqlen, start_pos, device=x.device), mask])",
        "F.pad(mask, (start_pos, 0), value=0.0)",
    )
    assert "        mask = F.pad(mask, (start_pos, 0), value=0.0)\n" in found.text
    assert found.text.replace("        mask = F.pad(mask, (start_pos, 0), value=0.0)\n", "") == MASK.replace(
        "        mask = torch.hstack([torch.zeros(seqlen, start_pos, device=x.device), mask])\n", ""
    )


@pytest.mark.parametrize(
    ("line", "rewritten"),
    [
        ("y = torch.cat([x, torch.zeros(a, n)], dim=-1)", "torch.nn.functional.pad(x, (0, n), value=0.0)"),
        ("y = torch.cat((torch.ones((n, b)), x))", "torch.nn.functional.pad(x, (0, 0, n, 0), value=1.0)"),
        (
            "y = torch.concat([torch.full((b, n, c), float('-inf')), x], axis=1)",
            "torch.nn.functional.pad(x, (0, 0, n, 0), value=float('-inf'))",
        ),
        (
            "y = torch.vstack([x, torch.zeros(n, b, dtype=x.dtype)])",
            "torch.nn.functional.pad(x, (0, 0, 0, n), value=0.0)",
        ),
        (
            "y = torch.hstack([torch.full(size=(a, n), fill_value=-1.0), x])",
            "torch.nn.functional.pad(x, (n, 0), value=-1.0)",
        ),
    ],
)
def test_each_join_of_a_constant_block_is_the_pad_along_its_dim(line: str, rewritten: str):
    found = block_pad(f"import torch\n{line}\n", 2)
    assert found is not None and found.rewritten == rewritten


@pytest.mark.parametrize(
    "line",
    [
        "y = torch.cat([torch.zeros(shape), x])",  # a shape or a size: not read
        "y = torch.cat([torch.zeros(a, n), torch.ones(a, n)], dim=1)",  # two blocks
        "y = torch.cat([x, torch.zeros(a, n)], dim=k)",  # a dim not written out
        "y = torch.cat([x, torch.zeros(a, n, requires_grad=True)], dim=1)",  # more than values
        "y = torch.cat([x, torch.zeros(a, n), z], dim=1)",  # three tensors
        "y = torch.vstack([torch.zeros(n, 4)[0], x])",  # not a block: a row of one
        "y = torch.cat([x, torch.zeros(a, n)], dim=1, out=z)",  # written into another
        "y = torch.stack([x, torch.zeros(a, n)])",  # a new dim, not a join
    ],
)
def test_other_joins_are_left_as_they_are(line: str):
    assert block_pad(f"import torch\n{line}\n", 2) is None


def _module(path: Path, text: str) -> torch.nn.Module:
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PrefillMask().eval()


def _inputs(seq: int, start_pos: int) -> tuple:
    return torch.randn(2, seq, 8), start_pos


def test_the_pad_exports_from_the_prefill_up_and_agrees_with_the_mask_as_written(tmp_path: Path):
    """As written, the program refuses start_pos 0 and 1; as a pad, it is exported with
    start_pos from 0 and answers as the module as written does at 0, 1 and the max."""
    written = _module(tmp_path / "written.py", MASK)
    padded = _module(tmp_path / "padded.py", block_pad(MASK, 19).text)
    shapes = ({1: Dim("seq", min=1, max=16)}, Dim.DYNAMIC(min=0, max=40))
    before = torch.export.export(written, _inputs(3, 5), dynamic_shapes=shapes).module()
    with pytest.raises(AssertionError, match="Guard failed"):
        before(*_inputs(3, 0))
    program = torch.export.export(padded, _inputs(3, 5), dynamic_shapes=shapes).module()
    for seq_size, start_pos in [(3, 0), (1, 0), (3, 1), (1, 1), (16, 40), (1, 40)]:
        args = _inputs(seq_size, start_pos)
        torch.testing.assert_close(program(*args), written(*args))


def test_the_prefill_refused_on_the_mask_line_gets_the_pad_as_its_preferred_fix(project):
    project.write("mask.py", MASK)
    project.write("pyproject.toml", SPEC)
    finding = only(project.module("PrefillMask").findings, "EL206")
    assert (finding.line, finding.dims) == (19, ("start_pos",)), finding
    [preferred] = [f for f in finding.fixes if f.preferred]
    assert preferred.action == (
        "Write `F.pad(mask, (start_pos, 0), value=0.0)` for"
        " `torch.hstack([torch.zeros(seqlen, start_pos, device=x.device), mask])`:"
        " the same tensor, with no guard on its size"
    )
    assert preferred.rank is Narrowing.REWRITE
    assert [p.name for p in preferred.probes] == ["example inputs", "example inputs at start_pos = 0"]
    # the range cut stays, not preferred: the proof's backup should the pad not agree
    assert [f.rank for f in finding.fixes if not f.preferred] == [Narrowing.RANGE]


def test_a_block_of_another_dtype_is_not_written_as_a_pad(project):
    """Joined to a half-precision mask, a float block makes the result float; a pad would keep
    it half: forward with the line rewritten gives other outputs, and only the range cut is offered."""
    half = (
        MASK.replace("PrefillMask", "HalfMask")
        .replace(", mask])", ", mask.half()])")
        .replace("x @ keys.transpose(1, 2) + mask", "(x @ keys.transpose(1, 2)).half() + mask")
    )
    assert half.count("half()") == 2
    project.write("half.py", half)
    project.write("pyproject.toml", SPEC.replace("mask.py:PrefillMask", "half.py:HalfMask"))
    finding = only(project.module("HalfMask").findings, "EL206")
    assert finding.line == 19 and [f.rank for f in finding.fixes] == [Narrowing.RANGE], finding.fixes
