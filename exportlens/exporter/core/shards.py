"""Which modules ``exportlens check --shard K/N`` checks (standard library only).

A module's shard is a hash of its own target string (``path.py:Class``) and nothing
else, so adding, removing or renaming a module never moves another between shards, and
each CI job keeps checking (and finding in its cache) the same modules run after run."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_FORM = re.compile(r"([0-9]+)/([0-9]+)")  # ASCII digits only: int() would take " 2" or "٢"


def shard_of(target: str, count: int) -> int:
    """The 1-based shard, of ``count``, that checks ``target``. sha256, not ``hash()``:
    the answer must be the same in every process and on every machine."""
    return int(hashlib.sha256(target.encode("utf-8")).hexdigest(), 16) % count + 1


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based: the K of K/N
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/3"``; anything else raises ``ValueError`` saying what is expected."""
        match = _FORM.fullmatch(text)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ValueError("K/N with 1 ≤ K ≤ N, like 2/3")
        return cls(int(match[1]), int(match[2]))

    def holds(self, target: str) -> bool:
        return shard_of(target, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
