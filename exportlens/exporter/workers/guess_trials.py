"""A scaffolded spec, proven before it is written: each module's guesses (edit/scaffold.py)
exported in the workers, the likeliest first, until one runs (no torch: the owner's side).

A guess *runs* when its export succeeds or fails on a real export problem (a
data-dependent branch, a dim the code constrains, an unsupported operation): that is
what the user asked exportlens for. It is *wrong* when the module cannot be built or
called with it (a spec error, EL403-EL405): the next guess is tried. Each round exports
every module still open in one batch, so the exports run side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.options import Options, Task
from ..core.report import ModuleReport, Status
from ..edit.scaffold import Candidate, with_tables
from ..spec.loading import PYPROJECT
from ..spec.plan import make_plan
from .batch import export_in_workers
from .pool import Pool

# what says the guess, not the module, is wrong: the spec's own errors and a module that cannot be built or called
WRONG_GUESS = ("EL0", "EL403", "EL404", "EL405")
# a guess is checked by the plain export alone (Task.GUESS): the first problem tells whether it runs
CHECKING = Options(collect_all=False)


@dataclass(frozen=True)
class Proven:
    """The guess to write for one module and what its export gave."""

    candidate: Candidate
    report: ModuleReport | None  # None: not exported (no guess at all)
    runs: bool  # exported, or failed on a real export problem

    @property
    def verdict(self) -> str:
        """For the table's comment: what the check of this guess gave."""
        if self.report is None:
            return "not exported"
        if self.report.status is Status.EXPORTED:
            return "exports"
        first = self.report.findings[0] if self.report.findings else None
        if first is None:
            return self.report.status.value
        where = f"{first.path}:{first.line}"
        if self.runs:
            return f"runs, and export fails on {first.code} at {where} (see exportlens check)"
        return f"no guess runs ({first.code} at {where}): set the inputs by hand"


def wrong_guess(report: ModuleReport) -> bool:
    return report.status is Status.SKIPPED or any(f.code.startswith(WRONG_GUESS) for f in report.findings)


def prove_guesses(
    root: Path,
    guesses: Mapping[str, list[Candidate]],
    pyproject: str | None,
    pool: Pool,
    sources: Mapping[Path, str] | None = None,
    options: Options = CHECKING,
) -> dict[str, Proven]:
    """For each target, its first guess that runs; where none does, its first guess and
    the failure it gave. ``pyproject`` is the project's text now (None: none yet);
    ``sources`` unsaved texts by absolute path (the editor's)."""
    proven: dict[str, Proven] = {}
    for round_ in range(max((len(c) for c in guesses.values()), default=0)):
        trying = {t: c[round_] for t, c in guesses.items() if round_ < len(c) and not (t in proven and proven[t].runs)}
        if not trying:
            break
        text = with_tables(pyproject, {t: c.table() for t, c in trying.items()})
        files = [root / t.split(":", 1)[0] for t in trying]
        plan = make_plan(files, root=root, only=set(trying), sources={**(sources or {}), root / PYPROJECT: text})
        report = export_in_workers(plan, pool, options, task=Task.GUESS, prove_fixes=False)
        for module in report.modules:
            if module.target in trying:
                runs = not wrong_guess(module)
                if runs or module.target not in proven:
                    proven[module.target] = Proven(trying[module.target], module, runs)
    return proven
