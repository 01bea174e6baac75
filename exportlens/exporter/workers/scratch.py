"""Each job's scratch folder, its ``TMPDIR``. The sandbox lets a job write inside that
folder but not remove the folder itself (its parent is not the job's to change), so the
folders are made inside a private folder of the warm parent's, which is not confined and
removes a job's folder when the job ends, and its own when it exits. A process that runs a
job with no warm parent (a spare, a test) makes and removes a temporary folder itself."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_base: Path | None = None  # the warm parent's private folder (mode 0700): None in any other process


def start() -> None:
    """In the warm parent, before its first job."""
    global _base
    _base = Path(tempfile.mkdtemp(prefix="exportlens-worker-"))


def _of(pid: int) -> Path | None:
    return None if _base is None else _base / f"job-{pid}"


def make() -> Path:
    """In a job's process, before it is confined: its own folder."""
    folder = _of(os.getpid())
    if folder is None:
        return Path(tempfile.mkdtemp(prefix="exportlens-job-"))
    folder.mkdir(mode=0o700)
    return folder


def owned_by_parent() -> bool:
    return _base is not None


def remove(pid: int) -> None:
    """In the warm parent, once job ``pid`` is over and nothing of it can write there."""
    folder = _of(pid)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def remove_all() -> None:
    if _base is not None:
        shutil.rmtree(_base, ignore_errors=True)
