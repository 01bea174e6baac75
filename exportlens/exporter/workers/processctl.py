"""Process control the workers need from Linux: die with the parent, adopt orphans, cap
memory, find and kill a process's whole tree. Each degrades to nothing where the call is
missing."""

from __future__ import annotations

import ctypes
import os
import resource
import select
import selectors
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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
    """The children of ``pid``, forked by any of its threads."""
    found: set[int] = set()
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found.update(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return found


def tree(pid: int) -> set[int]:
    """``pid`` and every process below it, whatever session or group each moved to."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo.extend(children(p))
    return found


def readable(fd: int, timeout: float) -> bool:
    sel = selectors.DefaultSelector()
    try:
        sel.register(fd, selectors.EVENT_READ)
        return bool(sel.select(timeout))
    except (ValueError, OSError):
        return False
    finally:
        sel.close()


def tree_private_bytes(pid: int) -> int:
    """Memory the processes of ``pid``'s tree hold of their own (private pages, resident):
    what a forked job added, not the warm parent's pages it shares until it writes them.
    A child that called ``setsid`` is still below the job, and counted."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as f:
                total += sum(int(line.split()[1]) << 10 for line in f if line.startswith((b"Private_Clean:", b"Private_Dirty:")))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return total


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``'s process group and every process below it, ``setsid`` or not. The
    tree is read before anything dies: a killed process's children are re-parented at once,
    and lose their link to it. (What one forks meanwhile is re-parented to the subreaper
    above, which kills what it did not fork itself.)"""
    below = tree(pid)
    killpg(pid)
    for p in below:
        kill(p)


@contextmanager
def exit_if_owner_goes() -> Iterator[None]:
    """While warming up we read no requests, so watch stdin for its writer going away:
    an owner killed during our start must not leave us running."""
    stop_r, stop_w = os.pipe()

    def watch() -> None:
        poll = select.poll()
        poll.register(0, select.POLLHUP)
        poll.register(stop_r, select.POLLIN)
        while True:
            for fd, events in poll.poll():
                if fd == stop_r:
                    return
                if events & (select.POLLHUP | select.POLLERR):
                    os._exit(0)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        os.write(stop_w, b"x")
        watcher.join()  # no thread of ours may live on into a fork
        os.close(stop_r)
        os.close(stop_w)


def reap_all() -> None:
    """Reap every child that has exited, without waiting for one that has not."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return
