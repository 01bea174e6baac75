"""Whether two runs' outputs agree (torch side): how a program's outputs differ from eager's,
in one line. Its own module so that what compares outputs (serving.py, rewritten.py,
probes.py) needs no other's imports."""

from __future__ import annotations

from typing import Any

import torch

from ..reading.violations import first_line


def differs(got: list[Any], want: list[Any]) -> str:
    """How the program's outputs differ from eager's ("" when they agree)."""
    if len(want) != len(got):
        return f"{len(got)} outputs, eager has {len(want)}"
    for i, (a, b) in enumerate(zip(want, got)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            try:
                torch.testing.assert_close(b, a, equal_nan=True)
            except AssertionError as e:
                return f"output {i}: {first_line(str(e))}"
    return ""
