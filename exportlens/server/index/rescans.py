"""Rescanning open files as they change, without ever blocking the server: one parse per
file at a time, off the event loop, always of the newest text. A text longer than
``IN_PROCESS`` characters is parsed in a subprocess (``scanner --one``): the tree of a
20,000-line file is memory a subprocess gives back when it exits and the server's heap
would not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

from .module_index import FileEntry, ModuleIndex
from .scanner import scan_one

IN_PROCESS = 100_000  # characters: about 2,500 lines, few enough for ast to parse without holding the loop long


class Rescans:
    def __init__(
        self,
        index: ModuleIndex,
        text_of: Callable[[Path], str],
        done: Callable[[Path], None],
        buffers: Callable[[Path, str], Mapping[Path, str]] = lambda path, text: {path: text},
    ) -> None:
        self.index = index
        self.text_of = text_of  # a file's text now: the editor's, else the disk's
        self.buffers = buffers  # what a scan of a file with that text reads from the editor
        self.done = done  # called on the event loop once a file's entry is current
        self.running: dict[Path, asyncio.Task] = {}
        self.parsing: set[Path] = set()  # past their delay: a newer text waits for them
        self.again: set[Path] = set()

    def request(self, path: Path, delay: float = 0.0) -> None:
        """Rescan ``path`` after ``delay`` s (a request within the delay starts it again, as
        typing does); if a parse is running, once more after it (newest text wins)."""
        if path in self.parsing:
            self.again.add(path)
            return
        waiting = self.running.pop(path, None)
        if waiting is not None:
            waiting.cancel()
        self.running[path] = asyncio.get_running_loop().create_task(self._run(path, delay))

    def cancel(self, gone: Callable[[Path], bool]) -> None:
        for path in [p for p in self.running if gone(p)]:
            self.running.pop(path).cancel()
            self.parsing.discard(path)
            self.again.discard(path)

    async def _run(self, path: Path, delay: float) -> None:
        task = asyncio.current_task()
        try:
            if delay:
                await asyncio.sleep(delay)
            self.parsing.add(path)
            text = self.text_of(path)
            entry = await self._parse(path, text) if path.suffix == ".py" else None
            if self.text_of(path) == text:  # else a newer text is on its way
                if entry is not None:
                    self.index.put(path, entry)
                self.done(path)
        finally:
            if self.running.get(path) is task:  # not already replaced by a newer request
                del self.running[path]
                self.parsing.discard(path)
        if path in self.again:
            self.again.discard(path)
            self.request(path)

    async def _parse(self, path: Path, text: str) -> FileEntry | None:
        if len(text) > IN_PROCESS:
            return await scan_one(path, text, self.index.folders)
        return await asyncio.to_thread(self.index.compute, path, self.buffers(path, text))
