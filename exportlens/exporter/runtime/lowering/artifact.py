"""What a target's compiler gives: something to run as the exported program runs, and its size (torch side)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Artifact:
    run: Callable[..., Any]  # takes forward's arguments, as the exported program does
    size: int  # bytes of what would be deployed
    name: str  # what it is, in a sentence's words: "the AOTInductor package"
