"""Frames to the client written by a thread of their own: a client that does not read for a
while fills the pipe, and a write to a full pipe waits; the event loop must not wait with it.

Frames are written in the order they were put, but for one rule: a frame put with a ``latest``
key says only the latest state of something (the status bar's counts, a progress's
percentage), so one still queued when a newer one of the same key comes is dropped unwritten.
The client would have drawn it and drawn over it at once; under a storm those frames are most
of the bytes.

A response keeps its place behind the notifications put before it, though LSP would let it go
first: the server's answers follow what it pushed (a command's answer after its module's
diagnostics, ``exportlens/checkWorkspace``'s after the problems it published), and a client
may read the one and look at the other.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from typing import BinaryIO

log = logging.getLogger(__name__)


class Stated(Enum):
    """What a notification that says only the latest state is of."""

    EXPORTS = auto()  # exportlens/exports: the status bar's counts
    PROGRESS = auto()  # a work-done progress's report: its message and percentage, of one token


@dataclass(frozen=True)
class Latest:
    """The key of frames of which only the newest matters: ``Latest(Stated.PROGRESS, token)``."""

    of: Stated
    name: str = ""


@dataclass
class _Queued:
    frame: bytes | None  # None once a newer frame of its key made it worthless
    latest: Latest | None


class Outbox:
    """Frames written to ``stream`` by a daemon thread, in order, each flushed; ``put`` never
    waits for the client. Once the client has closed its end, what is put is dropped and
    ``on_broken`` (set by the transport) is called once, from the thread."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.on_broken: Callable[[], None] | None = None
        self._queue: deque[_Queued] = deque()
        self._newest: dict[Latest, _Queued] = {}  # the queued frame of each latest key
        self._changed = threading.Condition()
        self._writing = False
        self._closed = False
        self.broken = False
        threading.Thread(target=self._run, name="exportlens-stdout", daemon=True).start()

    def put(self, frame: bytes, latest: Latest | None = None) -> None:
        with self._changed:
            if self.broken or self._closed:
                return
            queued = _Queued(frame, latest)
            if latest is not None:
                older = self._newest.get(latest)
                if older is not None:
                    older.frame = None
                self._newest[latest] = queued
            self._queue.append(queued)
            self._changed.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until every frame put is written, at most ``timeout`` seconds; whether it was."""
        with self._changed:
            return self._changed.wait_for(self._idle, timeout)

    def close(self, timeout: float) -> None:
        """Write what is queued (at most ``timeout`` seconds), then close the stream."""
        written = self.drain(timeout)
        with self._changed:
            self._closed = True
            left = sum(q.frame is not None for q in self._queue)
            self._changed.notify_all()
        if not written:  # the thread is still inside a write: closing would wait for it
            log.error("the client read nothing for %s s: %d messages to it left unwritten at exit", timeout, left)
            return
        try:
            self.stream.close()
        except (OSError, ValueError):
            pass

    def _idle(self) -> bool:
        return self.broken or (not self._queue and not self._writing)

    def _run(self) -> None:
        while (frame := self._next()) is not None:
            try:
                self.stream.write(frame)
                self.stream.flush()
            except (OSError, ValueError):  # a closed pipe, or a stream closed under us
                self._broke()
            with self._changed:
                self._writing = False
                self._changed.notify_all()

    def _next(self) -> bytes | None:
        """The next frame to write, waiting for one; None once closed with nothing left."""
        with self._changed:
            while True:
                while self._queue:
                    queued = self._queue.popleft()
                    if queued.latest is not None and self._newest.get(queued.latest) is queued:
                        del self._newest[queued.latest]
                    if queued.frame is not None:
                        self._writing = True
                        return queued.frame
                self._changed.notify_all()  # drained: a drain() waiting wakes
                if self._closed or self.broken:
                    return None
                self._changed.wait()

    def _broke(self) -> None:
        with self._changed:
            if self.broken:
                return
            self.broken = True
            self._queue.clear()
            self._newest.clear()
            self._changed.notify_all()
        log.error("the client closed the connection: the server ends")
        if self.on_broken is not None:
            self.on_broken()
