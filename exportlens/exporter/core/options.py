"""What one job does with its module, and how to run its export beyond its spec (no torch:
the CLI and server build these; the worker reads them)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from .report import Probe
from .settings import Overrides


class Task(enum.Enum):
    """What a job does with its module: declared where the job is made, read by the worker."""

    VERDICT = "verdict"  # export it: the verdict alone (the editor's, shown before the program is run)
    SERVE = "serve"  # export it, then run the program at the example inputs and the spec's bounds (proving/serving.py)
    # a fix's proof (workers/proofs.py): as SERVE, from the fixed texts, lowered for the spec's targets where it
    # names some, and compared with the module as the user wrote it on the fix's probes
    PROVE = "prove"
    LOWER = "lower"  # export it again and lower it for its targets (runtime/lowering/): after the verdict
    TREE = "tree"  # export each of its submodules: a SubmoduleTree (``exportlens tree``)
    GUESS = "guess"  # a guessed spec's trial (workers/guess_trials.py): the plain export's verdict alone

    @property
    def serves(self) -> bool:
        """Whether a program that exports is run at the example inputs and the spec's bounds."""
        return self in (Task.SERVE, Task.PROVE)

    @property
    def lowers(self) -> bool:
        """Whether a program that exports is lowered, for the targets its options name (``lowered_for``)."""
        return self in (Task.LOWER, Task.PROVE)


@dataclass(frozen=True)
class Options:
    artifact: Path | None = None  # save the .pt2 here on success
    collect_all: bool = True  # on failure, run draft export to find every problem
    overrides: Overrides = Overrides()  # the editor's or the command line's settings over the project's
    # a proof's (Task.PROVE): these probes run on the module as the user wrote it (the files the
    # fix edits, as they were: path -> text) and on the fixed program, and compared
    probes: tuple[Probe, ...] = ()
    eager_sources: dict[str, str] = field(default_factory=dict)


def lowered_for(task: Task, options: Options) -> tuple[str, ...]:
    """The targets a job lowers what it exports for: a lowering job names them in its overrides,
    and so does a proof whose spec declares some (workers/lowering.py, workers/proofs.py)."""
    return (options.overrides.targets or ()) if task.lowers else ()
