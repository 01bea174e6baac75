"""Home folders: no sandbox may be as wide as one (``workers/readable.py``, and the owner's
refusal of a project folder that holds one, ``workers/outcome.py``). Standard library only."""

from __future__ import annotations

import functools
import os
from pathlib import Path


def holds_a_home(path: Path) -> bool:
    """``/``, a home folder ($HOME's or the user's account's) or a folder above one."""
    try:
        real = os.path.realpath(path)
        homes = {os.path.realpath(h) for h in (os.environ.get("HOME"), _account_home()) if h}
    except (OSError, ValueError):
        return True
    return real == os.path.realpath("/") or any(h == real or h.startswith(os.path.join(real, "")) for h in homes)


@functools.cache  # the account does not change while a process runs: /etc/passwd read once
def _account_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return None
