"""The sandbox an export runs in. On Linux with Landlock (kernel 5.13 or later), a job's
process and everything it starts may read only the project, the interpreter's prefix and
import path, and the system's own folders; and write only its scratch folder and the
artifact folder. Landlock also keeps it from reaching other processes through ``/proc``
or ``ptrace`` (another process's file descriptors, memory or environment), the server's
included, and from ABI 6 (Linux 6.12) from signalling them or connecting to their abstract
Unix sockets: it cannot stop the server, or kill the warm parent to orphan what it started.
A seccomp filter (libseccomp, through ``pyseccomp``) refuses what Landlock does not cover:
changing a file's mode, owner, times or extended attributes, anywhere. Of ``/dev`` it reads only
the few devices every program reads: never a terminal (another terminal's typed input) or
``/dev/shm`` (other processes' shared memory).

Elsewhere (another OS, an older kernel, a container that forbids it) the job runs with what
is left, and ``available`` says what that is. ``landlockpy`` makes the Landlock calls.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

# folders every program reads: libraries, configuration, the kernel's views
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/nix/store", "/proc", "/sys")
# of /dev, what Python and torch read; not all of it: /dev/pts/N is another terminal's typed
# input, /dev/shm other processes' shared memory (which no path rule could narrow to the job's own)
READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# /dev/tty is the job's controlling terminal, and a job, in a session of its own, has none
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
SCOPES_ABI = 6  # signals and abstract Unix sockets confined to the sandbox (Linux 6.12)
# what changes a file's metadata, which Landlock's write rights do not cover; a filter sees no
# paths, so these fail everywhere, scratch included (an export never needs them)
METADATA_CALLS = (
    "chmod", "fchmod", "fchmodat", "fchmodat2",
    "chown", "fchown", "lchown", "fchownat", "chown32", "fchown32", "lchown32",
    "utime", "utimes", "utimensat", "futimesat", "utimensat_time64",
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr", "fremovexattr", "removexattrat",
)  # fmt: skip


def confine(project: Path | list[Path], writable: list[Path]) -> str | None:
    """Confine this process (and its future children) for good; None when all of it holds
    here, else what does not. It reads ``project`` (one folder, or several: the lowering
    process reads what the job handed over and what the compiler built). Both Landlock and
    seccomp confine the calling thread and what it starts: call it while the process has one
    thread (a job's child, just forked)."""
    if not sys.platform.startswith("linux"):
        return "Landlock and seccomp are Linux features"
    files = _landlock(project, writable)
    metadata = _forbid_metadata_changes()
    return "; ".join(why for why in (files, metadata) if why) or None


def confine_files(readable: list[Path], writable: list[Path]) -> str | None:
    """Landlock alone, for the one process that must change files' modes and so cannot take the
    seccomp filter: AOTInductor's compiler (runtime/lowering/compiler.py; the C++ linker marks
    what it links executable, Inductor sets its outputs' modes). It runs no user code: it
    compiles a program whose text the module controls escaped (runtime/lowering/literals.py),
    and never loads what it built. It reads ``readable`` as a job reads its project."""
    if not sys.platform.startswith("linux"):
        return "Landlock is a Linux feature"
    return _landlock(readable, writable)


def _landlock(project: Path | list[Path], writable: list[Path]) -> str | None:
    readable = [project] if isinstance(project, Path) else list(project)
    try:
        from landlockpy import AccessFS, AccessNet, Ruleset, Scope, abi_version, fs_for_abi

        abi = abi_version()
        if not abi:
            return "Landlock is not available here"
        handled = fs_for_abi(abi)
        file_rights = handled & (
            AccessFS.EXECUTE | AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
        )
        read = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
        # the network is not confined (handled_net empty); scopes the kernel lacks are dropped
        with Ruleset(
            handled_fs=handled, handled_net=AccessNet.NONE, scoped=Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET
        ) as ruleset:
            for path in _existing([*readable, *_interpreter(), *map(Path, SYSTEM + READABLE_DEVICES)]):
                ruleset.allow_path(path, read if path.is_dir() else read & file_rights)  # a file takes file rights only
            for path in _existing(map(Path, WRITABLE_DEVICES)):
                ruleset.allow_path(path, file_rights)
            for path in _existing(writable):
                ruleset.allow_path(path, handled)
            ruleset.restrict()
    except ImportError:
        return "the landlockpy package is not installed"
    except Exception as e:  # an old kernel, a seccomp profile that refuses the calls
        return f"Landlock is not available here: {e}"
    return None


def _forbid_metadata_changes() -> str | None:
    """A seccomp filter: every call of ``METADATA_CALLS`` fails with EPERM (PermissionError)."""
    try:
        import pyseccomp as seccomp  # raises RuntimeError where libseccomp is missing

        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in METADATA_CALLS:
            number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
            if number >= 0:  # negative: not a call of this architecture, or unknown to this libseccomp
                rules.add_rule(seccomp.ERRNO(errno.EPERM), number)
        rules.load()
    except ImportError:
        return "the pyseccomp package is not installed"
    except Exception as e:
        return f"seccomp is not available here: {e}"
    return None


def _interpreter() -> list[Path]:
    """What Python imports from (``readable``): never the current folder, ``/`` or a home."""
    from .readable import interpreter_folders

    return list(interpreter_folders())


def available() -> str:
    """What ``confine`` will enforce here, in words (for the status, the log and the docs'
    table); it starts with "landlock" where files are confined."""
    if not sys.platform.startswith("linux"):
        return "none: Landlock and seccomp are Linux features"
    try:
        from landlockpy import abi_version

        abi = abi_version()
        files = f"landlock (ABI {abi}): files, /proc and ptrace" if abi else "none: Landlock is not available here"
        if abi >= SCOPES_ABI:
            files += ", signals and abstract sockets"
        elif abi:
            files += f"; signals to other processes not confined (Landlock ABI {SCOPES_ABI}, Linux 6.12, confines them)"
    except ImportError:
        files = "none: the landlockpy package is not installed"
    except Exception as e:
        files = f"none: Landlock is not available here ({e})"
    try:
        import pyseccomp  # noqa: F401 - raises RuntimeError where libseccomp is missing

        metadata = "seccomp: file modes, owners, times and attributes"
    except ImportError:
        metadata = "file metadata not confined (the pyseccomp package is not installed)"
    except Exception as e:
        metadata = f"file metadata not confined ({e})"
    return f"{files}; {metadata}"


def off_here() -> str | None:
    """Why an export is confined in nothing here (another OS, no Landlock); None where files are."""
    said = available()
    return said.split(";")[0].removeprefix("none: ") if said.startswith("none") else None


def _existing(paths) -> list[Path]:
    out = []
    for p in paths:
        try:
            if p.exists() and p not in out:
                out.append(p)
        except OSError:
            continue
    return out
