"""The files of exportlens's own caches, read and found so that whatever stands in their
place is refused, not followed (standard library only).

A cache folder in a project (``.exportlens/cache``) is the project's to fill: a link
planted there would have us write, and prune, wherever it points, and a link to
``/dev/zero`` or a FIFO in place of an entry would be read forever or block. So an entry
is opened without following a link (``O_NOFOLLOW``), without blocking (``O_NONBLOCK``: a
FIFO opens and reads as nothing), kept only when it is a regular file, and read up to a
bound; a folder is used only when no link leads to it from where the cache starts.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class NotOurs(OSError):
    """A cache path that is not a plain file or folder of ours: a link, a device, a FIFO,
    a file past the size any entry of ours has."""


def open_entry(path: Path, limit: int) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file of at most ``limit`` bytes;
    FileNotFoundError where there is none, NotOurs where something else is there."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise NotOurs(e.errno, f"not a file exportlens wrote ({e.strerror})", str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotOurs(f"{path} is not a regular file")
        if st.st_size > limit:
            raise NotOurs(f"{path} holds {st.st_size} bytes, more than any entry of ours ({limit})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_entry(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` as ``open_entry`` allows it (and no more than ``limit`` of
    them, should it grow while read)."""
    with open_entry(path, limit) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotOurs(f"{path} grew past {limit} bytes while read")
    return data


def is_entry(path: Path) -> bool:
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
