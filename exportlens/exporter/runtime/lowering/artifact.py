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


class Refused(RuntimeError):
    """The artifact's runtime refused its inputs, at a node whose user's stack is known."""

    def __init__(self, message: str, stack: str) -> None:
        super().__init__(message)
        self.stack = stack  # the node's ``stack_trace``, as torch writes it
