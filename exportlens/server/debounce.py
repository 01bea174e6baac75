"""Files waiting out their debounce, and when a batch of them is whole.

A file's latest change wins (an earlier one still waiting is cancelled). A batch of files
past their debounce is coalesced by what is pending, never by a fixed wait: it grows for as
long as turns of the event loop still make files due (two hundred didOpens are handled in one
turn, their files come due in the next), then starts at once: a fixed wait would delay every save.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path


class Debounce:
    def __init__(self) -> None:
        self.tasks: dict[Path, asyncio.Task] = {}
        self.ends: dict[Path, float] = {}  # path -> when its debounce ends, on the loop's clock

    def start(self, path: Path, seconds: float, then: Callable[[], None]) -> None:
        """``then()`` once ``seconds`` pass without another ``start`` for ``path``."""
        self.cancel(path)
        loop = asyncio.get_running_loop()
        self.ends[path] = loop.time() + seconds
        self.tasks[path] = loop.create_task(self._after(path, seconds, then))

    async def _after(self, path: Path, seconds: float, then: Callable[[], None]) -> None:
        if seconds:
            await asyncio.sleep(seconds)
        self.tasks.pop(path, None)
        self.ends.pop(path, None)
        then()

    def cancel(self, path: Path) -> None:
        self.ends.pop(path, None)
        if (task := self.tasks.pop(path, None)) is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for path in list(self.tasks):
            self.cancel(path)

    def arriving(self, which: Callable[[Path], bool]) -> bool:
        """Whether a file ``which`` accepts is past its debounce, its ``then`` not yet run."""
        now = asyncio.get_running_loop().time()
        return any(end <= now and which(path) for path, end in self.ends.items())


async def coalesced(count: Callable[[], int], arriving: Callable[[], bool]) -> None:
    """Return once a turn of the loop left ``count()`` as it was and nothing is ``arriving()``."""
    while True:
        before = count()
        await asyncio.sleep(0)
        if count() == before and not arriving():
            return
