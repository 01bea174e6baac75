"""The sandbox an export runs in: on Linux with Landlock (kernel 5.13 or later), a job's
process and everything it starts may read only the project, the interpreter's prefix and
import path, and the system's own folders; and write only its scratch folder and the
artifact folder. Landlock also keeps it from reaching other processes through ``/proc``
(another process's file descriptors, memory or environment), the server's included.

Elsewhere (another OS, an older kernel, a container that forbids it) the job runs
unconfined and ``confine`` says why; the owner reports it once. The ``landlock`` package
makes the system calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

# folders every program reads: libraries, configuration, devices, the kernel's views
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/nix/store", "/proc", "/sys", "/dev")
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


def confine(project: Path, writable: list[Path]) -> str | None:
    """Confine this process (and its future children) for good; None when done, else why not."""
    if not sys.platform.startswith("linux"):
        return "Landlock is a Linux feature"
    try:
        import landlock
        from landlock.plumbing import FSAccess, landlock_abi_version

        landlock_abi_version()  # raises where the kernel has no Landlock
        ruleset = landlock.Ruleset()
        read = FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.EXECUTE
        for path in _existing([project, *_interpreter(), *map(Path, SYSTEM)]):
            ruleset.allow(path, rules=read if path.is_dir() else read & FSAccess.all_file())  # a file takes file rights only
        ruleset.allow(*_existing(map(Path, WRITABLE_DEVICES)), rules=FSAccess.all_file())
        ruleset.allow(*_existing(writable), rules=FSAccess.all())
        ruleset.apply()
    except ImportError:
        return "the landlock package is not installed"
    except Exception as e:  # an old kernel, a seccomp profile that refuses the calls
        return f"Landlock is not available here: {e}"
    return None


def _interpreter() -> list[Path]:
    """What Python imports from (``readable``): never the current folder, ``/`` or a home."""
    from .readable import interpreter_folders

    return interpreter_folders()


def available() -> str:
    """What ``confine`` will enforce here, in words (for the status and the log)."""
    if not sys.platform.startswith("linux"):
        return "none: Landlock is a Linux feature"
    try:
        from landlock.plumbing import landlock_abi_version

        return f"landlock (ABI {landlock_abi_version()})"
    except ImportError:
        return "none: the landlock package is not installed"
    except Exception as e:
        return f"none: Landlock is not available here ({e})"


def _existing(paths) -> list[Path]:
    out = []
    for p in paths:
        try:
            if p.exists() and p not in out:
                out.append(p)
        except OSError:
            continue
    return out
