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
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

_base: Path | None = None  # the warm parent's private folder (mode 0700): None in any other process


def start(base: Path) -> None:
    """In the warm parent, before its first job: the owner's folder for this process."""
    global _base
    _base = base


def owner_watched(argv: list[str]) -> AbstractContextManager[None]:
    """The warm parent's owner watched while the process imports torch (seconds, before
    ``main``; ``isolation.main``): an owner gone meanwhile takes the folder named by
    ``--scratch`` with it, as it does once the process is warm."""
    from .platform import exit_if_owner_goes

    if "--scratch" in argv[:-1]:
        start(Path(argv[argv.index("--scratch") + 1]))
    return exit_if_owner_goes(then=remove_all)


def _of(pid: int) -> Path | None:
    return None if _base is None else _base / f"job-{pid}"


def make() -> Path:
    """In a job's process (forked from the warm parent), before it is confined: its own folder."""
    folder = _of(os.getpid())
    if folder is None:
        raise RuntimeError("no scratch base: scratch.start() runs in the warm parent before it forks a job")
    folder.mkdir(mode=0o700)
    return folder


def remove_all() -> None:
    """In the warm parent (or a spare not yet confined) as it exits: the owner's folder for it,
    which the owner also removes once it sees the process gone, unless the owner went first."""
    if _base is not None:
        shutil.rmtree(_base, ignore_errors=True)


# Waits for the end of file on ``alive`` (the spare and its job gone), then removes the
# folder if the owner is gone too (its pipe hung up): an owner still there reads a crash's
# report from the folder first, and removes it itself.
_CLEANER = """
import os, select, shutil, sys
base, alive, owner = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
while os.read(alive, 65536):
    pass
hung_up = select.poll()
hung_up.register(owner, select.POLLHUP)
if hung_up.poll(0):
    shutil.rmtree(base, ignore_errors=True)
"""


def remove_if_orphaned() -> int | None:
    """In a spare, before it is confined (then it can no longer remove the owner's folder for
    it): a small process that removes that folder should the owner go before it could. Its
    pid: the spare's own kills must leave it be. None where no such process is started."""
    if _base is None or os.name != "posix":
        return None
    alive_r, alive_w = os.pipe()  # the write end stays open in this process (and what it forks) until it exits
    owner = os.dup(0)  # the owner's pipe to us: it hangs up when the owner goes
    try:
        cleaner = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CLEANER, str(_base), str(alive_r), str(owner)],
            pass_fds=(alive_r, owner),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # it must not hold the owner's pipes open
            start_new_session=True,
        )
    except OSError:
        os.close(alive_w)
        return None
    finally:
        os.close(alive_r)
        os.close(owner)
    return cleaner.pid


def remove(pid: int) -> None:
    """In the warm parent, once job ``pid`` is over and nothing of it can write there."""
    folder = _of(pid)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
