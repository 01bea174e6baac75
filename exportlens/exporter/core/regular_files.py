"""Files read so that whatever stands in a file's place is refused, never waited on or
read without end (standard library only).

A project's folder is the project's to fill: a FIFO named ``net.py`` or ``pyproject.toml``
would block any read of it forever, and a link to ``/dev/zero`` would be read until memory
runs out. So a file is opened without blocking (``O_NONBLOCK``: a FIFO opens at once),
kept only when it is a regular file (``fstat`` of what was opened), and read up to a
bound. exportlens's own caches go further (``follow=False``): a link planted in one would
have us read, write and prune wherever it points, so an entry is opened with
``O_NOFOLLOW``, and a cache folder is used only when no link leads to it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
MAX_SOURCE = 256 << 20  # bytes: a source file or pyproject.toml past this is no one's to read


class NotRegular(OSError):
    """Not a regular file (a FIFO, a device, a folder; with ``follow=False`` a link), or
    one past the size any file of its kind has."""


def open_regular(path: Path, limit: int, *, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file of at most ``limit`` bytes
    (``follow=False``: and not a link); FileNotFoundError where there is none, NotRegular
    where something else is there."""
    # Windows has neither flag (nor FIFOs): a link is refused from lstat there, not atomically
    nonblock, nofollow = getattr(os, "O_NONBLOCK", 0), getattr(os, "O_NOFOLLOW", 0)
    try:
        if not follow and not nofollow and os.path.islink(path):
            raise NotRegular("it is a link, not a regular file")
        fd = os.open(path, _FLAGS | nonblock | (0 if follow else nofollow))
    except NotRegular:
        raise
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise NotRegular(e.errno, f"not a regular file ({e.strerror})", str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"it is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise NotRegular(f"it holds {st.st_size} bytes, more than any file of its kind ({limit})")
        if nonblock:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int = MAX_SOURCE, *, follow: bool = True) -> bytes:
    """The bytes of ``path`` as ``open_regular`` allows it (and no more than ``limit`` of
    them, should it grow while read)."""
    with open_regular(path, limit, follow=follow) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotRegular(f"it grew past {limit} bytes while read")
    return data


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
    )
    return next((name for test, name in kinds if test(mode)), "a device")


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (a link to one is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def plain_folders(base: Path, folder: Path) -> bool:
    """Whether every step from ``base`` down to ``folder`` (``base`` itself excluded) is a
    real folder or not there yet: no link, no file, on the way."""
    for step in (folder, *folder.parents):
        if step == base:
            return True
        try:
            mode = os.lstat(step).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            return False
        if not stat.S_ISDIR(mode):
            return False
    return False  # ``folder`` is not below ``base``
