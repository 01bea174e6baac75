"""Every call the workers make to the operating system about processes: start one in a
group of its own, kill a process with everything below it, die with the owner, cap and
measure memory. One path per system; what a system lacks is said here, not guessed at
by the callers.

- Linux: process groups and sessions, ``prctl`` (die with the parent, adopt orphans),
  ``RLIMIT_AS``, and the process tree read from ``/proc``.
- macOS: process groups and sessions; the tree and memory from psutil (no ``/proc``);
  ``RLIMIT_AS`` is not enforced by the kernel, so only the tree's total holds.
- Windows: no fork, groups or signals: a new process group
  (``CREATE_NEW_PROCESS_GROUP``) and psutil's tree kill stand in for job objects, which
  psutil does not offer; no ``resource``, so only the tree's total holds (psutil polling).

Where fork after importing torch is unsafe (macOS, Windows) the pool runs each job in a
pre-started spare (``processes.Spares``); ``EXPORTLENS_NO_FORK=1`` forces that path here.
Likewise ``EXPORTLENS_NO_PROC=1`` makes Linux read trees and memory from psutil, as macOS
and Windows do: the way to run that path where there is ``/proc``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LINUX = sys.platform.startswith("linux")
WINDOWS = sys.platform == "win32"
NO_FORK = "EXPORTLENS_NO_FORK"  # set (not "0" or empty): run every job in a spare, as macOS and Windows do
NO_PROC = "EXPORTLENS_NO_PROC"  # set (not "0" or empty): psutil for trees and memory, as macOS and Windows use
SIGKILL = getattr(signal, "SIGKILL", 9)  # Windows has no SIGKILL; a crash report still names 9 so

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def fork_is_safe() -> bool:
    """Fork after importing torch: Linux only (macOS's and Windows's libraries do not survive it)."""
    return LINUX and os.environ.get(NO_FORK, "") in ("", "0")


def reads_proc() -> bool:
    """Process trees and memory read from ``/proc``: Linux, unless told to use psutil instead."""
    return LINUX and os.environ.get(NO_PROC, "") in ("", "0")


# -- starting and stopping (the owner's side, and the warm parent's) ------------------------


def new_group() -> dict[str, Any]:
    """``subprocess.Popen`` options that start a process in a group of its own: a Ctrl-C in
    the terminal is ours to handle, and one kill ends the process and its group."""
    if sys.platform == "win32":  # (the test a type checker reads as the platform's: the name exists there only)
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def new_session() -> None:
    """In a forked job's child (POSIX): its own session and group, so one kill ends it."""
    os.setsid()


def kill(pid: int) -> None:
    if WINDOWS:
        _psutil_kill([pid])
        return
    try:
        os.kill(pid, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def killpg(pid: int) -> None:
    """Kill ``pid``'s process group (POSIX), or ``pid`` where it leads none or groups
    cannot be signalled (Windows: its tree)."""
    if WINDOWS:
        kill_tree(pid)
        return
    for how in (os.killpg, os.kill):
        try:
            how(pid, SIGKILL)
            return
        except (ProcessLookupError, PermissionError, OSError):
            continue


def kill_group_left(pid: int) -> None:
    """After ``pid`` (a group's leader) exited: kill what is left of its group, which keeps
    the number from reuse while it has members (POSIX). Windows has no such group to kill,
    and a number of a process gone may be another's already: nothing."""
    if not WINDOWS:
        killpg(pid)


def kill_tree(pid: int) -> None:
    """Kill ``pid``'s process group and every process below it, ``setsid`` or not. The tree
    is read before anything dies: a killed process's children are re-parented at once, and
    lose their link to it. (What one forks meanwhile is re-parented to the subreaper above,
    on Linux, which kills what it did not fork itself.)"""
    below = tree(pid)
    if WINDOWS:
        _psutil_kill(sorted(below, key=lambda p: p != pid))
        return
    killpg(pid)
    for p in below:
        kill(p)


def _psutil_kill(pids: list[int]) -> None:
    import psutil

    for pid in pids:
        try:
            psutil.Process(pid).kill()  # TerminateProcess on Windows, SIGKILL elsewhere
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue


def die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when its parent dies (the parent is single-threaded, so
    "the thread that forked us" is the parent). Only a forked child calls it: Linux only."""
    prctl(PR_SET_PDEATHSIG, SIGKILL)
    if os.getppid() != parent:  # it died before the prctl took effect
        os._exit(1)


def adopt_orphans() -> None:
    """Linux: what a job's processes leave behind comes back to us (a child subreaper).
    Elsewhere orphans go to the system's init, and only the tree read before a kill goes."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def prctl(option: int, value: int) -> None:
    if not LINUX:
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# -- the process tree --------------------------------------------------------------------


def children(pid: int) -> set[int]:
    """The children of ``pid``, forked by any of its threads."""
    if not reads_proc():
        return _psutil_tree(pid, recursive=False)
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
    if not reads_proc():
        return {pid} | _psutil_tree(pid, recursive=True)
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo.extend(children(p))
    return found


def _psutil_tree(pid: int, recursive: bool) -> set[int]:
    import psutil

    try:
        return {c.pid for c in psutil.Process(pid).children(recursive=recursive)}
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return set()


# -- memory --------------------------------------------------------------------------------


def limit_memory(limit: int | None) -> str | None:
    """Cap this process's address space at what it maps now plus ``limit``; None when the
    cap holds here, else why not (the tree's total, ``tree_private_bytes``, still holds)."""
    if not limit:
        return None
    if not LINUX:
        return (
            "RLIMIT_AS is not enforced on macOS" if sys.platform == "darwin" else "no per-process memory cap on Windows"
        )
    import resource

    cap = _mapped_bytes() + limit
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    return None


def tree_private_bytes(pid: int) -> int:
    """Memory the processes of ``pid``'s tree hold of their own (private pages, resident):
    what a forked job added, not the warm parent's pages it shares until it writes them.
    A child that called ``setsid`` is still below the job, and counted."""
    if not reads_proc():
        return _psutil_private_bytes(tree(pid))
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as f:
                total += sum(
                    int(line.split()[1]) << 10 for line in f if line.startswith((b"Private_Clean:", b"Private_Dirty:"))
                )
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return total


def _mapped_bytes() -> int:
    """This process's address space: what ``RLIMIT_AS`` counts."""
    if not reads_proc():
        import psutil

        return psutil.Process().memory_info().vms
    import resource

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def _psutil_private_bytes(pids: set[int]) -> int:
    import psutil

    total = 0
    for p in pids:
        try:
            total += psutil.Process(p).memory_full_info().uss  # unique set size: its own pages
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


# -- the owner going away ----------------------------------------------------------------


@contextmanager
def exit_if_owner_goes(then: Any = None) -> Iterator[None]:
    """While warming up we read no requests, so watch for the owner going away (its end
    of our stdin closing; on Windows, its process): an owner killed during our start must
    not leave us running (``then``: a cleanup first). The watch ends before we fork: no thread
    of ours lives on into a fork."""
    stop = threading.Event()
    watcher = threading.Thread(target=watch_owner, args=(stop, then), daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def watch_owner(stop: threading.Event, then: Any = None) -> None:
    """Until ``stop`` is set: once the owner is gone, run ``then`` (a cleanup) and exit."""
    owner = os.getppid()
    while not stop.wait(0.1):
        if _owner_gone(owner):
            if then is not None:
                then()
            os._exit(0)


def _owner_gone(owner: int) -> bool:
    if WINDOWS:  # no poll() of a pipe: is the process that started us still there?
        import psutil

        return not psutil.pid_exists(owner)
    import select

    poll = select.poll()
    poll.register(0, select.POLLHUP)
    return any(events & (select.POLLHUP | select.POLLERR) for _, events in poll.poll(0))


def reap_all() -> None:
    """Reap every child that has exited, without waiting for one that has not."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def readable(fd: int, timeout: float) -> bool:
    return _ready(fd, timeout, write=False)


def write_within(fd: int, data: bytes, seconds: float) -> bool:
    """Write all of ``data`` to a pipe unless its reader takes none of it for ``seconds``
    (it stalls, or is stopped) or is gone: whether all of it went. A full pipe never holds
    the writer for good."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            if not _ready(fd, seconds, write=True):
                return False
        except OSError:
            return False
    return True


def _ready(fd: int, timeout: float, write: bool) -> bool:
    import selectors

    sel = selectors.DefaultSelector()
    try:
        sel.register(fd, selectors.EVENT_WRITE if write else selectors.EVENT_READ)
        return bool(sel.select(timeout))
    except (ValueError, OSError):
        return False
    finally:
        sel.close()
