"""Process control the workers need from Linux: die with the parent, adopt orphans, cap
memory, find and kill children. Each degrades to nothing where the call is missing."""

from __future__ import annotations

import ctypes
import os
import resource
import selectors
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when its parent dies (the parent is single-threaded,
    so "the thread that forked us" is the parent)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the prctl took effect
        os._exit(1)


def limit_memory(limit: int | None) -> None:
    """Cap the address space at what the process maps now plus ``limit``."""
    if not limit:
        return
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        mapped = 0
    cap = mapped + limit
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def children(pid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return {int(p) for p in f.read().split()}
    except OSError:
        return set()


def readable(fd: int, timeout: float) -> bool:
    sel = selectors.DefaultSelector()
    try:
        sel.register(fd, selectors.EVENT_READ)
        return bool(sel.select(timeout))
    except (ValueError, OSError):
        return False
    finally:
        sel.close()


def group_private_bytes(pgid: int) -> int:
    """Memory the processes of group ``pgid`` hold of their own (private pages, resident):
    what a forked job added, not the warm parent's pages it shares until it writes them."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[2]) != pgid:
                    continue
            with open(f"/proc/{entry.name}/smaps_rollup", "rb") as f:
                total += sum(int(line.split()[1]) << 10 for line in f if line.startswith((b"Private_Clean:", b"Private_Dirty:")))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return total


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
