"""``exportlens serve``'s first moments: the warm parent starts before the server imports its
own code (pygls, lsprotocol, libcst and every handler), so that torch imports beside them,
not after them, and a cold start's first verdict waits for the slower of the two. It runs no
workspace code (docs/workers.md), so nothing waits for the client's trust or settings:
``initialized`` keeps it, restarts it for the client's python or jobs, or ends it."""

from __future__ import annotations

from ..exporter.workers.pool import Pool
from .settings import ServerSettings


def main() -> None:
    defaults = ServerSettings()
    early = Pool(defaults.python, defaults.jobs, persist=True)  # exports.persistent_pool, before its imports
    early.warm()
    from .app import main as serve  # the server's own imports, while torch imports in the warm parent

    serve(early)
