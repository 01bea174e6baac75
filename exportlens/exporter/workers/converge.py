"""Fixes that converge: apply, export again, fold in what that suggests (owner side, no torch).

A fix proven alone can leave the module one step short: the range fix for ``seq``
exposes the guard on ``batch``, and with both the program refuses sizes on a
``reshape`` line. A user would apply, check again and apply again. Instead, while
the export with a fix applied fails only on problems that each carry a preferred
fix, those fixes are applied as well and the module is exported again, up to
``ROUNDS`` exports in all. The fix offered is every edit made on the way, as one
edit per file of the texts it started from, and says what its last export gave.

A ``Converging`` is driven by whoever submits jobs (the CLI blocks on futures, the
server awaits them): ``step`` takes what the last export gave and returns the next
job, or None once the fix went as far as it goes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace

from ..core.codes import stopped
from ..core.report import Edit, Fix, ModuleReport, Narrowing, Status
from ..core.sources import Sources
from ..edit.text_edits import apply_edits, edit_between
from ..spec.plan_cache import PlanCache
from .proof_plans import with_owner_plan
from .protocol import Job

ROUNDS = 4  # exports per fix, the first included: each folds what the one before suggests


class Converging:
    """One fix on its way: the job that exports with everything folded in so far, and what
    the last finished export with it gave."""

    def __init__(
        self,
        job: Job,
        sources: Sources,
        solves: Callable[[ModuleReport], bool] = lambda after: True,
        plans: PlanCache | None = None,
    ) -> None:
        self.job = job
        self._plans = plans or PlanCache()  # each round's job carries the owner's plan of its texts
        self._solves = solves  # whether the fix alone solved its own problem: else nothing is folded
        self.first: ModuleReport | None = None  # what the fix alone gave
        self.after: ModuleReport | None = None
        self.folded: list[Fix] = []  # fixes applied after the first, in order
        self._base = job
        self._sources = sources
        self._rounds = 1
        self._kept = 0

    def step(self, after: ModuleReport | None) -> Job | None:
        """Take what exporting ``self.job`` gave (None: it did not finish, and the fix stays as
        it was before that round); the next job to run, or None when done. A round whose
        process ended before its export did (a timeout, a crash: a busy machine, a worker gone)
        tells nothing of the fix: it did not finish either. It is not run again at once: a
        timeout costs the job's whole timeout again, in a pool other modules wait on; the
        module's next export tries the fix anew."""
        if after is not None and stopped(after):
            after = None
        if after is not None and self.first is not None and after.status not in (Status.FAILED, Status.EXPORTED):
            after = None  # what was folded in broke the spec: the round before is as far as it goes
        if after is None:
            if self._base is not self.job:
                self.job = self._base  # the last round did not finish: keep what the one before proved
                self.folded = self.folded[: self._kept]
            return None
        self.after, self._base, self._kept = after, self.job, len(self.folded)
        self.first = self.first or after
        if after.status is not Status.FAILED or self._rounds >= ROUNDS or not self._solves(self.first):
            return None
        more = _next_fixes(after)
        texts = self._applied(more)
        if not texts:
            return None
        self._rounds += 1
        self.folded.extend(more)
        self.job = with_owner_plan(replace(self.job, sources={**self.job.sources, **texts}), self._plans)
        return self.job

    def edits(self, first: Fix) -> tuple[Edit, ...]:
        """Everything applied since the start, as one edit per file of the original texts."""
        if not self.folded:
            return first.edits
        out = []
        for path, text in self._base.sources.items():
            if self._sources.exists(path) and text != self._original(path):
                edit = edit_between(path, self._original(path), text)
                if edit is not None:
                    out.append(edit)
        return tuple(out)

    def rank(self, first: Fix) -> Narrowing:
        """How much the fix narrows with everything folded in: its most narrowing part's."""
        return max((first, *self.folded), key=lambda f: f.rank.order).rank

    def _original(self, path: str) -> str:
        return self._sources.text(path) or ""

    def _text(self, path: str) -> str | None:
        if path in self.job.sources:
            return self.job.sources[path]
        return self._sources.text(path) if self._sources.exists(path) else None

    def _applied(self, fixes: list[Fix]) -> dict[str, str]:
        """The files ``fixes`` edit, as the job has them, with their edits made ({} if none)."""
        texts = {}
        for path in dict.fromkeys(e.path for f in fixes for e in f.edits):
            text = self._text(path)
            if text is None:
                return {}
            texts[path] = apply_edits(text, [e for f in fixes for e in f.edits if e.path == path])
        return {p: t for p, t in texts.items() if t != self._text(p)}


def _next_fixes(after: ModuleReport) -> list[Fix]:
    """The preferred fix of each problem, those whose edits do not overlap an earlier one's;
    none when a problem has no preferred fix (the module cannot get there by fixes alone), or
    only a ``torch._check`` of one side: the probes were built before that branch was met, so
    none may take its other side, and the rounds would call an assumption proven."""
    chosen: list[Fix] = []
    for finding in after.findings:
        fix = next((f for f in finding.fixes if f.preferred), None)
        if fix is None or fix.rank is Narrowing.ASSUMPTION:
            return []
        if fix in chosen or any(_overlap(e, d) for e in fix.edits for c in chosen for d in c.edits):
            continue  # the same fix twice, or one for the next round
        chosen.append(fix)
    return chosen


def _overlap(a: Edit, b: Edit) -> bool:
    return (
        a.path == b.path
        and (a.line, a.column) <= (b.end_line, b.end_column)
        and (b.line, b.column) <= (a.end_line, a.end_column)
    )


def stepped(pending: list[tuple[Converging, Job]], after: list) -> list[tuple[Converging, Job | None]]:
    """Each fix's next round from what its last gave (an exception: it did not finish); the
    server runs it off its event loop, since a round's job is planned."""
    return [(rounds, rounds.step(a if isinstance(a, ModuleReport) else None)) for (rounds, _), a in zip(pending, after)]


class Once:
    """``submit`` that exports the same texts once: fixes on their way often meet (a finding's
    own fix and the fix for all reach the same edits), and their rounds then share one job."""

    def __init__(self, submit: Callable[[Job], Future]) -> None:
        self._submit = submit
        self._futures: dict[tuple[tuple[str, str], ...], Future] = {}

    def __call__(self, job: Job) -> Future:
        key = tuple(sorted(job.sources.items()))
        if key not in self._futures:
            self._futures[key] = self._submit(job)
        return self._futures[key]
