"""The installed torch and the range exportlens is checked on (compat, torch side)."""

from __future__ import annotations

import re

FLOOR = (
    2,
    9,
)  # the oldest torch whose examples block, corpus and not-slow suite were checked green (2.8: see docs/architecture.md)
NEWEST = (2, 15)  # the newest checked: newer ones are used as they are (their forms may be new)
RANGE = f"{FLOOR[0]}.{FLOOR[1]} to {NEWEST[0]}.{NEWEST[1]}"


def _torch_version() -> str:
    import torch  # (here: the tests read the range without importing torch)

    return torch.__version__


def installed(version: str | None = None) -> tuple[int, int]:
    """``2.9.1+cpu`` -> (2, 9) (the installed torch's, by default); one that does not read as
    a version -> (0, 0)."""
    m = re.match(r"(\d+)\.(\d+)", version or _torch_version())
    return (int(m[1]), int(m[2])) if m else (0, 0)


def unsupported(version: str | None = None) -> str | None:
    """Why this torch (the installed one, by default) is refused: older than the floor; else None."""
    version = version or _torch_version()
    if installed(version) >= FLOOR:
        return None
    return (
        f"not exported: the installed torch is {version}, and exportlens supports torch {RANGE}"
        f" (older torch words its errors otherwise, and findings could land on the wrong lines);"
        f" install torch>={FLOOR[0]}.{FLOOR[1]} into the interpreter that runs the exports"
    )
