"""Reading many files on every core (no torch): a pool of the other processes, and this one.

Work is *started* before its results are wanted: every chunk goes to the pool at once, so
the pool keeps working while this process does what only it can (resolving bases, between
two rounds of parsing). When this process is free it *finishes* what was started: it takes
back the newest chunks the pool has not begun and runs them itself, and decodes what the
pool sent back between them, so that both end together however busy the machine is.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.report import Finding
from . import compact
from .outline import FileOutline
from .prefilter import Sketch

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

SERIAL_BELOW = 64  # fewer files than this are read in this process: a pool costs more to start
CHUNK = 8  # files per task: small, so that the processes end together; large enough to cost little to send

Read = Sketch | FileOutline | Finding | None  # what a job gives: what crosses the process boundary


@dataclass
class _Chunk:
    results: list[Any]  # the whole batch's, filled in at ``at``
    at: int
    fn: Callable[[Any], Read]
    items: Sequence[Any]
    future: Future[list[str]]


class Work:
    """Jobs started now and finished later, by the pool and by this process (``pool`` None:
    this process alone, each job run as it is started)."""

    def __init__(self, pool: ProcessPoolExecutor | None = None) -> None:
        self._pool = pool
        self._chunks: deque[_Chunk] = deque()

    def start(self, fn: Callable[[Any], Read], items: Sequence[Any]) -> list[Any]:
        """The list ``fn`` of each item will be in, in order, once ``finish`` returns."""
        results: list[Any] = [None] * len(items)
        if self._pool is None:
            results[:] = map(fn, items)
            return results
        for at in range(0, len(items), CHUNK):
            part = items[at : at + CHUNK]
            self._chunks.append(_Chunk(results, at, fn, part, self._pool.submit(_encoded, fn, part)))
        return results

    def finish(self) -> None:
        """Every result started in place. The pool takes chunks from the front; this process
        takes back the newest it has not begun, until none is left that it may take."""
        while self._chunks:
            oldest, newest = self._chunks[0], self._chunks[-1]
            if oldest.future.done():
                self._chunks.popleft()
                sent = oldest.future.result()
                oldest.results[oldest.at : oldest.at + len(sent)] = [compact.loads(r, _decoded) for r in sent]
            elif newest.future.cancel():  # the pool had not begun it
                self._chunks.pop()
                newest.results[newest.at : newest.at + len(newest.items)] = map(newest.fn, newest.items)
            else:
                oldest.future.result()  # the pool has begun every chunk: wait for the first

    def run(self, fn: Callable[[Any], Read], items: Sequence[Any]) -> list[Any]:
        results = self.start(fn, items)
        self.finish()
        return results


@contextmanager
def working(jobs: int | None, size: int) -> Iterator[Work]:
    """Work over about ``size`` items, by ``jobs`` processes: this one and a pool of the others,
    or this one alone when the work is small. By default one process per core: this one works
    too, instead of only waiting on the pool and decoding what it sends back."""
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or size < SERIAL_BELOW:
        yield Work()
        return
    # imported here: a tree checked again unchanged starts no process, and need not import them
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork where there is one: the children start at once, with this process's imports
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context, initializer=gc.disable) as pool:
        try:
            yield Work(pool)
        except BaseException:
            pool.shutdown(cancel_futures=True)  # what was started and not begun is not wanted any more
            raise


def _encoded(fn: Callable[[Any], Read], items: Sequence[Any]) -> list[str]:
    """``fn`` of each item as the index cache writes it (compact.py)."""
    return [_encoded_one(fn(item)) for item in items]


def _encoded_one(value: Read) -> str:
    if isinstance(value, Sketch):
        return compact.dumps((0, compact.sketch_data(value)))
    return compact.dumps((1, compact.outline_data(value)))


def _decoded(data: list) -> Read:
    kind, value = data
    return compact.sketch_of(value) if kind == 0 else compact.outline_of(value)
