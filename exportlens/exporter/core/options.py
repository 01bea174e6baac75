"""How to run one export, beyond its spec (no torch: the CLI and server build these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .report import Probe
from .settings import Overrides


@dataclass(frozen=True)
class Options:
    artifact: Path | None = None  # save the .pt2 here on success
    collect_all: bool = True  # on failure, run draft export to find every problem
    overrides: Overrides = Overrides()  # the editor's or the command line's settings over the project's
    # after a successful export, run the program at the example and the declared bounds
    # (runtime/proving/serving.py); the server runs that as a second job, after the verdict is shown
    serve: bool = True
    # after a successful export, lower it for the spec's targets (runtime/lowering/): a second
    # job, which the owner sends once the export's own verdict is in (workers/lowering.py)
    lower: bool = False
    # a proof of a fix (workers/proofs.py): run these probes on the module as the user wrote it
    # (the files the fix edits, as they were: path -> text) and on the fixed program, and compare
    probes: tuple[Probe, ...] = ()
    eager_sources: dict[str, str] = field(default_factory=dict)
