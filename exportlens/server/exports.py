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
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..exporter.core.codes import stops
from ..exporter.core.options import Options, Task
from ..exporter.core.report import ModuleReport, Status
from ..exporter.core.sources import Sources, read_text
from ..exporter.core.targets import Target
from ..exporter.find.deps import ImportGraph
from ..exporter.spec.loading import PYPROJECT, ExportSpec
from ..exporter.spec.plan import Plan, Planned
from ..exporter.workers.batch import job_for
from ..exporter.workers.converge import Once, stepped
from ..exporter.workers.pool import Cancelled, Pool
from ..exporter.workers.proofs import converging, proofs, proven
from ..exporter.workers.protocol import Job
from .debounce import Debounce, coalesced
from .reasons import Why, Whys, said
from .session import ModuleKey, Result, Session, spec_key
from .snapshots import WorkspaceSnapshot

log = logging.getLogger(__name__)

Landed = Callable[[Path, list[Target]], None]  # (root, targets whose result changed)
PoolFactory = Callable[[str, int], Pool]  # (python, jobs) -> a pool; tests hand in their own


def persistent_pool(python: str, jobs: int) -> Pool:
    """The server's pool: verdicts kept on disk, so a reopened workspace shows them at once."""
    return Pool(python, jobs, persist=True)


class BatchProgress(Protocol):
    """What a batch shows the user while its exports run (``progress.Progress``)."""

    async def create(self) -> None: ...
    def begin(self) -> None: ...
    def step(self, report: ModuleReport) -> None: ...
    def end(self) -> None: ...


ProgressFactory = Callable[[Path, list[Target]], BatchProgress]  # (root, targets) -> the batch's progress


@dataclass(frozen=True)
class _Submitted:
    """One job handed to the pool, and what it was made from."""

    target: Target
    number: int  # the job's number in this session: a newer one supersedes it
    file: Path  # the module's file
    seen: str  # that file's text as the export read it
    versions: Mapping[Path, int]  # the version of each document open then
    disk: Mapping[Path, str]  # the module's file and pyproject.toml as read from disk, where not open
    read: str  # the module's file as the worker imports it: its findings are positions in this text
    reasons: Whys  # why it runs
    job: Job  # as handed to the pool (a fix's proof is this job, from other texts)
    spec: ExportSpec | None  # ``spec_key`` of the module's spec then


class Exports:
    def __init__(
        self,
        session: Session,
        snapshot: Callable[[], WorkspaceSnapshot],
        landed: Landed,
        say: Callable[[str], None],
        progress: ProgressFactory,
        pool_factory: PoolFactory = persistent_pool,
    ) -> None:
        self.session = session
        self.snapshot = snapshot  # the documents open now
        self.landed = landed
        self.say = say  # a line in the client's log: every decision is logged
        self.progress = progress
        self.pool_factory = pool_factory
        self.pool: Pool | None = None
        self._debounce = Debounce()
        self._due: dict[Path, dict[Path, Why]] = {}  # root -> files past their debounce -> why
        self._batches: dict[Path, asyncio.Task] = {}  # root -> the task that exports its due files
        self._commanded: dict[ModuleKey, str] = {}  # running exports the user asked for -> the text
        self._verifying: set[asyncio.Task] = set()  # re-exports of cached verdicts, proofs of fixes (kept referenced)
        self.graph = ImportGraph()  # which files import which: parsed again only where a text changed
        self._served: set[str] = set()  # cache keys whose remembered verdict includes the serving run
        self.exported: Callable[[Path, _Submitted], None] = lambda root, job: None  # then lowered (lowering.py)

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
        self._debounce.cancel_all()
        for task in [*self._batches.values(), *self._verifying]:
            task.cancel()
        self._due.clear()
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def drop(self, gone: Callable[[Path], bool]) -> None:
        """Forget pending exports of files that are ``gone`` (their folder was removed)."""
        for path in [p for p in self._debounce.tasks if gone(p)]:
            self._debounce.cancel(path)
        for due in self._due.values():
            for path in [p for p in due if gone(p)]:
                del due[path]

    # -- when ------------------------------------------------------------------------

    def file_changed(self, path: Path, why: Why) -> None:
        """A document was saved (or edited, with exportOn = change): export what it affects, debounced."""
        if not self.session.trusted:
            return
        seconds = self.session.settings.debounce_ms / 1000  # newest edit wins
        self._debounce.start(path, seconds, lambda: self._debounced(path, why))

    def _debounced(self, path: Path, why: Why) -> None:
        root = self.session.root_of(path)
        self._due.setdefault(root, {})[path] = why
        if root not in self._batches:
            self._batches[root] = asyncio.get_running_loop().create_task(self._export_due(root))

    async def _export_due(self, root: Path) -> None:
        """Export the modules the files due in ``root`` affect, in one batch: two hundred files
        opened at once are one plan and one look at the import graph, not two hundred."""
        try:
            await coalesced(
                lambda: len(self._due.get(root, ())),
                lambda: self._debounce.arriving(lambda p: self.session.root_of(p) == root),
            )
            due = self._due.pop(root, {})
            del self._batches[root]  # files due from now on start the next batch
        except asyncio.CancelledError:
            self._due.pop(root, None)
            self._batches.pop(root, None)
            raise
        if not due:
            return
        try:
            targets = await asyncio.to_thread(self.affected, root, due)  # off the loop: parses
            await self.export(root, targets, tuple(due.values()))
        except asyncio.CancelledError:
            raise
        except Exception:
            names = ", ".join(p.name for p in due)
            log.exception("exporting after a change to %s failed", names)
            said = traceback.format_exc().strip().splitlines()[-1]
            self.say(f"internal error while exporting after a change to {names}: {said}")

    def affected(self, root: Path, paths: Iterable[Path]) -> list[Target]:
        """Modules a change to ``paths`` can change: those of the open ones, and those of open files
        that import one of them (a pyproject.toml change affects every open module of its project)."""
        paths = list(paths)
        docs = self.snapshot()
        files = docs.sources(root)
        open_files = [p for p in docs.documents if p.suffix == ".py" and self.session.root_of(p) == root]
        targets = [Target.of(m) for path in paths if path in docs for m in self._modules(path)]
        changed = {path.resolve() for path in paths}
        every = any(path.name == PYPROJECT for path in paths)
        for other in open_files:
            if other in changed:
                continue
            if every or not changed.isdisjoint(self.graph.closure(files, other)):
                targets += [Target.of(m) for m in self._modules(other)]
        return list(dict.fromkeys(targets))

    def _modules(self, path: Path):
        return entry.modules if (entry := self.session.index.get(path)) else ()

    # -- which, and how ----------------------------------------------------------------

    async def export(
        self, root: Path, targets: Iterable[Target], why: Why | Sequence[Why], *, artifacts: Path | None = None
    ) -> dict[Target, ModuleReport]:
        """Export ``targets`` now (each in its own worker; a class: each of its variants); returns
        the reports that landed. A verdict of an earlier session (on disk) lands at once, marked
        ``cached``, and is then verified again; an export the user asked for never takes one."""
        targets, whys = list(targets), (why,) if isinstance(why, Why) else tuple(why)
        if not targets or not self.session.trusted:
            return {}
        docs = self.snapshot()
        plan = self.session.plan_of(root, targets, docs)
        pool = self.start_pool()
        submitted: list[tuple[_Submitted, Future]] = []
        try:
            for planned in [p for p in plan.modules if p.spec is not None]:  # no spec: static diagnostics say so
                await asyncio.sleep(0)  # each job parses a closure, hashes a key: requests are answered between
                submitted += filter(None, [self._submit(pool, plan, planned, docs, whys, artifacts)])
        except asyncio.CancelledError:  # between two: those submitted are killed, as ``_gather`` kills a batch's
            self.cancel(root, [sub.target for sub, _ in submitted])
            raise
        waits = [(sub.target, self._land(root, sub, asyncio.wrap_future(future))) for sub, future in submitted]
        if not waits:
            return {}
        self.landed(root, [])  # CodeLenses show "exporting…"
        return await self._gather(root, waits, [Target.of(p.module, p.variant) for p in plan.modules])

    def _submit(
        self, pool: Pool, plan: Plan, planned: Planned, docs: WorkspaceSnapshot, whys: Whys, artifacts: Path | None
    ) -> tuple[_Submitted, Future] | None:
        """Hand one module's job to the pool, or None where the user's own export of this
        very text is running (let it finish)."""
        s = self.session.settings_at(plan.root)
        root, file = plan.root, plan.root / planned.module.path
        text = docs.texts.get(file)
        seen = text if text is not None else docs.get(file).text
        key = ModuleKey(root, Target.of(planned.module, planned.variant))
        if Why.COMMAND not in whys and self._commanded.get(key) == seen:
            return None
        # exportOn = change exports the editor's unsaved text
        sources = {planned.module.path: text} if s.export_on == "change" and text is not None else {}
        # the program is run at the spec's bounds in a second job, after this verdict is shown
        # (_serve); an artifact the user asked for is saved only once it has been run
        options = Options(artifacts / f"{planned.module.name}.pt2" if artifacts else None, overrides=s.overrides)
        task = Task.VERDICT if artifacts is None else Task.SERVE
        job = job_for(
            plan, planned, options, task=task, environment=pool.environment, sources=sources, imports=self.graph.imports
        )
        number = self.session.next_number()
        self.session.running[key] = number
        self._commanded.pop(key, None)
        if Why.COMMAND in whys:
            self._commanded[key] = seen
        self.session.exports_started += 1
        self.say(f"exporting {key.target} ({said(whys)}, job {number})")
        disk = {p: t for p, t in ((file, seen), (root / PYPROJECT, plan.project.text)) if p not in docs}
        # what the worker imports: the editor's text it was sent, else the disk's (``seen`` where the file is not open)
        read = text if sources and text is not None else seen if text is None else read_text(file)
        sub = _Submitted(key.target, number, file, seen, docs.versions, disk, read, whys, job, spec_key(planned.spec))
        return sub, pool.submit(job, fresh=any(why.fresh for why in whys))

    async def _gather(
        self, root: Path, waits: Sequence[tuple[Target, Awaitable[ModuleReport | None]]], planned: list[Target]
    ) -> dict[Target, ModuleReport]:
        """Wait for a batch, with its progress shown once the jobs run (the client's round
        trip never delays them); cancelled, the planned modules' jobs are killed, not just the wait."""
        progress = self.progress(root, [target for target, _ in waits])
        await progress.create()
        progress.begin()
        landed: dict[Target, ModuleReport] = {}
        try:
            try:
                reports = await asyncio.gather(*(wait for _, wait in waits))
            except asyncio.CancelledError:
                self.cancel(root, planned)
                raise
            for (target, _), report in zip(waits, reports):
                if report is not None:
                    landed[target] = report
                    progress.step(report)
        finally:
            progress.end()
        return landed

    def cancel(self, root: Path, targets: Iterable[Target]) -> None:
        """Kill the exports of ``targets``, running or still queued (behind other jobs, or
        waiting for the worker to start: a job has no process yet then)."""
        for target in targets:
            if self.pool is not None and self.pool.cancel(str(target), str(root)):
                self.say(f"cancelling the export of {target}")

    async def _land(self, root: Path, job: _Submitted, wait: Awaitable[ModuleReport]) -> ModuleReport | None:
        """Put a job's report in the session, unless a newer job superseded it or, with
        exportOn = change, its file changed while it ran."""
        key = ModuleKey(root, job.target)
        try:
            report = await wait
        except (Cancelled, asyncio.CancelledError):
            if self.session.running.get(key) == job.number:
                del self.session.running[key]
                self._commanded.pop(key, None)
                self.landed(root, [job.target])
            return None
        if self.session.running.get(key) != job.number:
            self.say(f"dropped a stale result for {job.target} (job {job.number}): a newer export is running")
            return None
        del self.session.running[key]
        self._commanded.pop(key, None)
        now = self.snapshot().texts.get(job.file)
        if now is not None and now != job.seen and self.session.settings.export_on == "change":
            self.say(f"dropped the result for {job.target} (job {job.number}): the file changed while it ran")
            self.landed(root, [job.target])
            return None
        if self.session.spec_key(key, self.snapshot()) != job.spec:
            self.say(f"dropped the result for {job.target} (job {job.number}): its spec changed while it ran")
            self.landed(root, [job.target])
            return None
        self.session.results[key] = Result(report, job.versions, job.disk, {job.file: job.read}, job.spec)
        verdict = f"{report.status.value} in {report.seconds:.2f} s" + (
            f", {len(report.findings)} finding(s)" if report.findings else ""
        )
        origin = ", from an earlier session's cache" if report.cached else ""
        self.say(f"{job.target}: {verdict} (job {job.number}{origin})")
        self.landed(root, [job.target])
        if report.cached and Why.REVERIFY not in job.reasons:
            self._reverify(root, job.target)
        self._later(self._prove(root, job, self.session.results[key]))
        self._later(self._serve(root, job, self.session.results[key]))
        self.exported(root, job)
        return report

    async def _prove(self, root: Path, job: _Submitted, result: Result) -> None:
        """Export with each preferred fix applied (proofs.py), round after round while that
        suggests more (converge.py), beside the other exports, and put what each reached in
        its title, unless a newer result landed meanwhile."""
        sources, plans = Sources.of(root, job.job.sources), self.session.plans
        # each proof's plan is made here, once per text, off the event loop (proof_plans.py)
        tries = await asyncio.to_thread(
            lambda: [
                (p, converging(result.report, p, sources, plans))
                for p in proofs(job.job, result.report, sources, plans)
            ]
        )
        if not tries or self.pool is None:
            return
        pool = self.pool
        submit = Once(lambda j: pool.submit(j, supersede=False, background=True))
        pending = [(rounds, p.job) for p, rounds in tries]
        key = ModuleKey(root, job.target)
        while pending:
            submitted = await asyncio.to_thread(list, map(submit, (j for _, j in pending)))  # as in _serve
            after = await asyncio.gather(*map(asyncio.wrap_future, submitted), return_exceptions=True)
            if self.session.results.get(key) is not result:
                return  # the module was exported again: these fixes are gone
            for code, message in stops(after).items():
                self.say(f"{job.target}: a fix's proof was stopped ({code}: {message}); the next export tries it again")
            rounds_next = await asyncio.to_thread(stepped, pending, after)
            pending = [(rounds, j) for rounds, j in rounds_next if j is not None]
        if self.session.results.get(key) is not result:
            return  # exported again while the last round was stepped: its verdict is not to be written over
        proven_report = proven(result.report, tries)
        self.session.results[key] = replace(result, report=proven_report, proven=True)
        pool.remember(job.job, proven_report)
        self.say(f"{job.target}: proved {len(tries)} fix(es) by exporting with each applied")
        self.landed(root, [job.target])

    async def _serve(self, root: Path, job: _Submitted, result: Result) -> None:
        """Run an exported program on the example inputs and at the spec's bounds (serving.py)
        in a job of its own, once the verdict is shown; what it finds (EL206) lands as a new
        verdict, with its fixes proven, unless a newer result landed meanwhile."""
        report, pool = result.report, self.pool
        if report.status is not Status.EXPORTED or report.cached or job.job.task.serves or pool is None:
            return
        if job.job.key and job.job.key in self._served:
            return  # the pool answered with the verdict a serving run already made
        served = replace(job.job, key="", task=Task.SERVE)
        try:
            future = await asyncio.to_thread(pool.submit, served, supersede=False, background=True)
            after = await asyncio.wrap_future(future)  # submitted off the loop: a job's end holds the pool's lock
        except Exception:
            return  # cancelled, or the worker went away: the next export runs it again
        key = ModuleKey(root, job.target)
        if self.session.results.get(key) is not result:
            return
        after = replace(after, seconds=report.seconds)  # the verdict's own time, not the run's
        self.session.results[key] = replace(result, report=after)
        pool.remember(job.job, after)
        self._served.add(job.job.key)
        self.say(f"{job.target}: ran the exported program at the spec's bounds: {after.status.value}")
        if after.status is not Status.EXPORTED:
            self.landed(root, [job.target])
            self._later(self._prove(root, job, self.session.results[key]))

    def _later(self, work: Coroutine[object, object, object]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._verifying.add(task)
        task.add_done_callback(self._verifying.discard)

    def _reverify(self, root: Path, target: Target) -> None:
        """Export again what an earlier session's verdict answered: shown at once, it stays
        marked as cached until this lands (its lens says it is being checked again)."""
        self._later(self.export(root, [target], Why.REVERIFY))
