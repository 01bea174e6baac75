"""Each job's scratch folder, its ``TMPDIR``. The sandbox lets a job write inside that
folder but not remove the folder itself (its parent is not the job's to change), so the
folders are made inside a private folder that the owner makes for each warm parent
(``processes.Warm``, which removes it once that process has exited, however it ended);
the warm parent, which is not confined, removes a job's folder when the job ends. A
spare (``spare.py``), which runs one job with no warm parent, makes its job's folder in
the owner's folder for it too, and writes a crash's report beside it (``protocol.FAULT``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_base: Path | None = None  # the warm parent's private folder (mode 0700): None in any other process


def start(base: Path) -> None:
    """In the warm parent, before its first job: the owner's folder for this process."""
    global _base
    _base = base


def _of(pid: int) -> Path | None:
    return None if _base is None else _base / f"job-{pid}"


def make() -> Path:
    """In a job's process (forked from the warm parent), before it is confined: its own folder."""
    folder = _of(os.getpid())
    if folder is None:
        raise RuntimeError("no scratch base: scratch.start() runs in the warm parent before it forks a job")
    folder.mkdir(mode=0o700)
    return folder


def remove(pid: int) -> None:
    """In the warm parent, once job ``pid`` is over and nothing of it can write there."""
    folder = _of(pid)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
