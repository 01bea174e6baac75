"""A helper memoized with ``functools.lru_cache`` and called with a traced size (issue 36):
hashing the symbolic size raises TypeError while exporting, though eager runs. The finding
names the function and its decorator, and the fix takes the decorator off, proven by
exporting, serving the range and agreeing with eager."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checked

from exportlens.exporter.edit.memo_decorators import uncached

WINDOWED = """\
from functools import lru_cache

import torch
from torch import nn


@lru_cache(maxsize=None)
def ramp(width):
    return torch.arange(width) / width


class Windowed(nn.Module):
    def forward(self, frames):
        return frames * ramp(frames.shape[-1])
"""

SPEC = """
[tool.exportlens.modules."windowed.py:Windowed"]
inputs = { frames = "f32[4, width]" }
dims = { width = { min = 2, max = 512, example = 31 } }
"""


def test_the_cache_decorator_of_the_function_a_line_calls_is_taken_off():
    found = uncached(WINDOWED, 14)
    assert found is not None
    assert (found.function, found.decorator) == ("ramp", "lru_cache(maxsize=None)")
    assert "@lru_cache" not in found.text
    assert "\n\ndef ramp(width):\n    return torch.arange(width) / width\n" in found.text


@pytest.mark.parametrize(
    "text",
    [
        "def f(n):\n    return n\n\n\ny = f(3)\n",  # not memoized
        "import functools\n\n\n@functools.wraps(g)\ndef f(n):\n    return n\n\n\ny = f(3)\n",  # another decorator
    ],
)
def test_a_call_of_a_function_without_a_cache_is_left_as_it_is(text: str):
    assert uncached(text, len(text.splitlines())) is None


@pytest.mark.slow
def test_a_memoized_helper_called_with_a_traced_size_is_named_and_its_cache_removed(tmp_path: Path):
    (tmp_path / "windowed.py").write_text(WINDOWED, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(SPEC, encoding="utf-8")
    [module] = checked(tmp_path)
    [finding] = module["findings"]
    assert (finding["code"], finding["line"]) == ("EL305", 14)
    assert finding["message"].startswith(
        "`ramp` is memoized with `@lru_cache(maxsize=None)`, which hashes its arguments"
    )
    assert "SymInt" not in finding["message"]
    [preferred] = [f for f in finding["fixes"] if f["preferred"]]
    assert preferred["title"].startswith("Remove `@lru_cache(maxsize=None)` from `ramp`")
    assert (preferred["verified"], preferred["rank"], preferred["remaining"]) == ("serves", "rewrite", 0)
    assert preferred["probes"] and all(p["agrees"] for p in preferred["probes"]), preferred["probes"]
