"""Lowering for deployment targets in the editor (docs/targets.md#in-the-editor).

After a module exports, each target its spec names (``targets = ["onnx"]``) is lowered in a
job of its own (workers/lowering.py), one lowering at a time and behind every export in the
pool's queue, so that exports never wait for one; the "Compile for …" CodeLens runs one now.
What each gives lands in the export's ``Result.lowered`` and is published as its findings are.

A lowering follows one export: a newer export of the module (a save) kills it, as the pool
supersedes every job of the module; one waiting its turn is dropped once its export's result
is no longer the module's; one that lands after the module's file changed on disk is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from ..exporter.core.lowering import FAILED, Lowering
from ..exporter.core.report import ModuleReport, Status
from ..exporter.core.sources import read_text
from ..exporter.core.targets import Target
from ..exporter.workers.lowering import lowering_job, with_lowerings
from ..exporter.workers.pool import Cancelled
from .exports import Exports, Landed, _Submitted
from .reasons import Why
from .session import Lowered, ModuleKey, Result


@dataclass(eq=False)
class _Lowering:
    """One module lowered for one target, after one export of it."""

    root: Path
    export: _Submitted  # the export it follows: its job is lowered
    result: Result  # what that export landed: ``lowered`` takes the outcome
    to: str  # the deployment target
    now: bool = False  # the user asked (the lens): it runs first, and never answers from the cache
    future: Future | None = None  # the pool's, once submitted
    preempted: bool = False  # it made way for one the user asked for: it runs again after that
    done: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    @property
    def module(self) -> ModuleKey:
        return ModuleKey(self.root, self.export.target)

    @property
    def key(self) -> tuple[ModuleKey, str]:
        return self.module, self.to


class Lowerings:
    def __init__(self, exports: Exports, landed: Landed, say: Callable[[str], None]) -> None:
        self.exports, self.session = exports, exports.session
        self.landed, self.say = landed, say
        self._queue: list[_Lowering] = []
        self._running: _Lowering | None = None
        self._task: asyncio.Task | None = None
        self._last: dict[ModuleKey, tuple[_Submitted, Result]] = {}  # each module's latest export
        exports.exported = self.exported

    def exported(self, root: Path, export: _Submitted) -> None:
        """An export landed: where it exported, and lowerOnSave is on, lower it for its spec's targets."""
        key = ModuleKey(root, export.target)
        result = self.session.results[key]
        self._last[key] = (export, result)
        if result.report.status is not Status.EXPORTED or not self.session.settings.lower_on_save:
            return
        for to in self.session.lower_to(key, self.exports.snapshot()):
            self._enqueue(_Lowering(root, export, result, to))

    async def now(self, root: Path, target: Target, to: str) -> Lowered | None:
        """Lower ``target`` for ``to`` now, exporting it first where its last export is not of
        its text of now; None where it did not export, or the lowering was cancelled."""
        last = self._latest(ModuleKey(root, target))
        if last is None:
            await self.exports.export(root, [target], Why.COMMAND)
            last = self._latest(ModuleKey(root, target))
        if last is None or last[1].report.status is not Status.EXPORTED:
            return None
        item = _Lowering(root, *last, to, now=True)
        self._enqueue(item)
        return await item.done

    def _latest(self, key: ModuleKey) -> tuple[_Submitted, Result] | None:
        """The module's latest export, where it is still its result and of the file as it is."""
        last = self._last.get(key)
        current = self.session.results.get(key)
        if last is None or current is None or current.lowered is not last[1].lowered or not _unchanged(last[0]):
            return None
        return last

    def cancel(self, root: Path, target: Target, to: str | None = None) -> bool:
        """Stop ``target``'s lowerings (for ``to`` only, where given), waiting or running."""
        key = ModuleKey(root, target)
        hit = [i for i in [*self._queue, self._running] if i and i.module == key and to in (None, i.to)]
        for item in hit:
            self._stop(item)
        if hit:
            self.say(f"cancelling the lowering of {target}" + (f" for {to}" if to else ""))
            self.landed(root, [target])
        return bool(hit)

    def drop(self, gone: Callable[[Path], bool]) -> None:
        """Stop the lowerings of projects whose root is ``gone`` (a folder removed)."""
        for item in [i for i in [*self._queue, self._running] if i is not None and gone(i.root)]:
            self._stop(item)

    def close(self) -> None:
        self.drop(lambda root: True)

    def make_way(self) -> None:
        """Exports are starting: with one worker, the lowering running (unless the user asked for
        it) makes way, and runs again after them; with more, they take the others."""
        running, pool = self._running, self.exports.pool
        if running is not None and not running.now and pool is not None and pool.jobs == 1:
            self.say(f"{running.export.target}: its lowering for {running.to} makes way for exports")
            self._stop(running, again=True)

    # -- one at a time ---------------------------------------------------------------------

    def _enqueue(self, item: _Lowering) -> None:
        """Queue ``item``, in place of one waiting for the same module and target; one the user
        asked for goes first, and the lowering running makes way for it."""
        for old in [q for q in self._queue if q.key == item.key]:
            self._queue.remove(old)
            old.done.set_result(None)
        running = self._running
        if running is not None and running.key == item.key and running.result.lowered is not item.result.lowered:
            self._stop(running)  # a lowering of an earlier export
        if item.now:
            if running is not None and (running.key == item.key or not running.now):
                self._stop(running, again=running.key != item.key)
            self._queue.insert(sum(q.now for q in self._queue), item)
        else:
            self._queue.append(item)
        self.session.compiling.setdefault(item.key, False)
        self.landed(item.root, [item.export.target])
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def _stop(self, item: _Lowering, again: bool = False) -> None:
        """End ``item``: waiting, or its job killed; ``again``: it runs again, after what goes first."""
        item.preempted = again
        if item in self._queue:
            self._queue.remove(item)
            self._finish(item, None)
        elif item.future is not None and self.exports.pool is not None:
            self.exports.pool.cancel_job(item.future)

    async def _run(self) -> None:
        try:
            while self._queue:
                item = self._running = self._queue.pop(0)
                try:
                    lowered = await self._lower(item)
                finally:
                    self._running = None
                if item.preempted:
                    item.preempted, item.future = False, None
                    self.session.compiling[item.key] = False
                    self._queue.insert(sum(q.now for q in self._queue), item)
                    continue
                self._finish(item, lowered)
        finally:
            self._task = None

    def _finish(self, item: _Lowering, lowered: Lowered | None) -> None:
        if not item.done.done():
            item.done.set_result(lowered)
        if not any(q.key == item.key for q in self._queue):
            self.session.compiling.pop(item.key, None)
        self.landed(item.root, [item.export.target])

    async def _lower(self, item: _Lowering) -> Lowered | None:
        target, pool = item.export.target, self.exports.pool
        if pool is None or not self._current(item) or not _unchanged(item.export):
            return None
        self.session.compiling[item.key] = True
        self.landed(item.root, [target])  # the lens: "onnx: compiling…"
        self.say(f"lowering {target} for {item.to}" + (" (command)" if item.now else ""))
        job = lowering_job(item.export.job, (item.to,))
        try:
            item.future = pool.submit(job, fresh=item.now, supersede=False, background=not item.now)
            report = await asyncio.wrap_future(item.future)
        except (Cancelled, RuntimeError):  # cancelled, superseded, or the pool closed
            self.say(f"{target}: its lowering for {item.to} stopped")
            return None
        if not self._current(item) or not _unchanged(item.export):
            self.say(f"dropped the lowering of {target} for {item.to}: the module changed while it ran")
            return None
        return self._land(item, report)

    def _current(self, item: _Lowering) -> bool:
        """Its export's result is still the module's, and no newer export runs."""
        current = self.session.results.get(item.module)
        return (
            current is not None and current.lowered is item.result.lowered and item.module not in self.session.running
        )

    def _land(self, item: _Lowering, report: ModuleReport) -> Lowered | None:
        if report.status is Status.SKIPPED:
            return None
        exported = self.session.results[item.module].report
        merged = with_lowerings(exported, report, (item.to,))
        lowering = next((lo for lo in merged.lowerings if lo.target == item.to), Lowering(item.to, FAILED))
        lowered = Lowered(lowering, merged.findings[len(exported.findings) :])
        item.result.lowered[item.to] = lowered
        codes = ", ".join(dict.fromkeys(f.code for f in lowered.findings))
        self.say(f"{item.export.target}: {lowering.said(True)}" + (f" ({codes})" if codes else ""))
        return lowered


def _unchanged(export: _Submitted) -> bool:
    """The module's file is still what the export read: a lowering job imports the disk's, unless
    it carries the editor's text (exportOn = change)."""
    if export.target.path in export.job.sources:
        return True
    try:
        return read_text(export.file) == export.read
    except OSError:
        return False
