"""Scheduling exports: debounced per document, newest edit wins, stale results dropped.

Each export runs in the worker pool (a fresh process per job); this module only
decides *when* and *which*, and lands results in the session. A newer job for a
module kills the older one (the pool supersedes it); a result whose module file
changed since the job started is dropped, so old positions never land on new text.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..exporter.core.options import Options
from ..exporter.core.report import ModuleReport
from ..exporter.static.deps import closure
from ..exporter.static.spec import PYPROJECT
from ..exporter.workers.batch import job_for
from ..exporter.workers.pool import Cancelled, Pool
from .session import Result, Session

log = logging.getLogger(__name__)

Landed = Callable[[Path, list[str]], None]  # (root, targets whose result changed)
PoolFactory = Callable[[str, int], Pool]  # (python, jobs) -> a pool; tests hand in their own


class Exports:
    def __init__(
        self,
        session: Session,
        overrides: Callable[[], Mapping[Path, str]],
        landed: Landed,
        say: Callable[[str], None],
        progress: Callable[[Path, list[str]], Any],
        pool_factory: PoolFactory = Pool,
    ) -> None:
        self.session = session
        self.progress = progress  # (root, targets) -> a Progress for one batch
        self.overrides = overrides  # open documents' text, by absolute path
        self.landed = landed
        self.say = say  # a line in the client's log: every decision is logged
        self.pool_factory = pool_factory
        self.pool: Pool | None = None
        self._debounce: dict[Path, asyncio.Task] = {}
        self._commanded: dict[tuple[Path, str], str] = {}  # running exports the user asked for -> the text

    # -- the pool ------------------------------------------------------------------

    def start_pool(self) -> Pool:
        s = self.session.settings
        if self.pool is not None and (self.pool.python != s.python or self.pool.jobs != s.jobs):
            self.say(f"settings changed (python {s.python}, jobs {s.jobs}): restarting the workers")
            self.pool.close()
            self.pool = None
        if self.pool is None:
            self.pool = self.pool_factory(s.python, s.jobs)
            self.pool.warm()
        return self.pool

    def close(self) -> None:
        for task in self._debounce.values():
            task.cancel()
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    # -- when ------------------------------------------------------------------------

    def file_changed(self, path: Path, reason: str) -> None:
        """A document was saved (or edited, with exportOn = change): export what it affects, debounced."""
        if not self.session.trusted:
            return
        pending = self._debounce.pop(path, None)
        if pending is not None:
            pending.cancel()  # newest edit wins
        self._debounce[path] = asyncio.get_running_loop().create_task(self._after_debounce(path, reason))

    async def _after_debounce(self, path: Path, reason: str) -> None:
        if self.session.settings.debounce_ms:
            await asyncio.sleep(self.session.settings.debounce_ms / 1000)
        self._debounce.pop(path, None)
        root = self.session.root_of(path)
        try:
            await self.export(root, self.affected(root, path), reason)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("exporting after a change to %s failed", path)
            self.say(f"internal error while exporting after a change to {path.name}: {traceback.format_exc().strip().splitlines()[-1]}")

    def affected(self, root: Path, path: Path) -> list[str]:
        """Modules a change to ``path`` can change: its own, and those of open files that import it
        (a pyproject.toml change affects every open module of its project)."""
        open_files = [p for p in self.overrides() if p.suffix == ".py" and self.session.root_of(p) == root]
        targets = [m.target for m in self._modules(path)]
        for other in open_files:
            if other == path:
                continue
            if path.name == PYPROJECT or path.resolve() in closure(root, other):
                targets += [m.target for m in self._modules(other)]
        return list(dict.fromkeys(targets))

    def _modules(self, path: Path):
        entry = self.session.index.get(path)
        return entry.modules if entry else ()

    # -- which, and how ----------------------------------------------------------------

    async def export(self, root: Path, targets: Iterable[str], reason: str, *, artifacts: Path | None = None) -> dict[str, ModuleReport]:
        """Export ``targets`` now (each in its own worker); returns the reports that landed."""
        targets = list(targets)
        if not targets or not self.session.trusted:
            return {}
        s = self.session.settings
        overrides = dict(self.overrides())
        modules = [m for m in (self.session.index.by_target(root, t) for t in targets) if m is not None]
        plan = self.session.plan(root, modules, overrides)
        pool = self.start_pool()
        options = Options(device=s.device, strict=s.strict, ir=s.ir)
        waits = []
        for planned in plan.modules:
            if planned.spec is None:
                continue  # no example inputs, or a spec error: static diagnostics say so
            file = root / planned.module.path
            text = overrides.get(file)
            # exportOn = change exports the editor's unsaved text
            sources = {planned.module.path: text} if s.export_on == "change" and text is not None else {}
            seen = text if text is not None else _read(file)
            key = (root, planned.target)
            if reason != "command" and self._commanded.get(key) == seen:
                continue  # the user's own export of this very text is running: let it finish
            opts = replace(options, artifact=artifacts / f"{planned.module.name}.pt2") if artifacts else options
            job = job_for(plan, planned, opts, timeout=s.timeout, memory_limit=s.memory_limit, python=pool.python, sources=sources)
            number = self.session.next_number()
            self.session.running[key] = number
            self._commanded.pop(key, None)
            if reason == "command":
                self._commanded[key] = seen
            self.session.exports_started += 1
            self.say(f"exporting {planned.target} ({reason}, job {number})")
            future = pool.submit(job)
            waits.append((planned.target, self._land(root, planned.target, number, seen, file, asyncio.wrap_future(future))))
        if not waits:
            return {}
        self.landed(root, [])  # CodeLenses show "exporting…"
        # progress is shown once the jobs run: the client's round trip never delays them
        progress = self.progress(root, [w[0] for w in waits])
        await progress.create()
        progress.begin()
        landed: dict[str, ModuleReport] = {}
        try:
            try:
                reports = await asyncio.gather(*(w[1] for w in waits))
            except asyncio.CancelledError:  # the request was cancelled: kill the jobs, not just the wait
                self.cancel(root, [p.target for p in plan.modules])
                raise
            for report in reports:
                if report is not None:
                    landed[report.target] = report
                    progress.step(report)
        finally:
            progress.end()
        return landed

    def cancel(self, root: Path, targets: Iterable[str]) -> None:
        for target in targets:
            if self.pool is not None and target in self.pool.job_pids():
                self.say(f"cancelling the export of {target}")
                self.pool.cancel(target)

    async def _land(self, root: Path, target: str, number: int, seen: str, file: Path, wait: asyncio.Future) -> ModuleReport | None:
        key = (root, target)
        try:
            report = await wait
        except (Cancelled, asyncio.CancelledError):
            if self.session.running.get(key) == number:
                del self.session.running[key]
                self._commanded.pop(key, None)
                self.landed(root, [target])
            return None
        if self.session.running.get(key) != number:
            self.say(f"dropped a stale result for {target} (job {number}): a newer export is running")
            return None
        del self.session.running[key]
        self._commanded.pop(key, None)
        now = self.overrides().get(file)
        if now is not None and now != seen and self.session.settings.export_on == "change":
            self.say(f"dropped the result for {target} (job {number}): the file changed while it ran")
            self.landed(root, [target])
            return None
        self.session.results[key] = Result(report, seen)
        verdict = f"{report.status.value} in {report.seconds:.2f} s" + (f", {len(report.findings)} finding(s)" if report.findings else "")
        self.say(f"{target}: {verdict} (job {number})")
        self.landed(root, [target])
        return report


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
