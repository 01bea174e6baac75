"""The language server, built explicitly: ``build()`` creates the server object, hands
it the factories of its worker pool and its workspace indexer, and registers each
handler module's handlers on it. ``main()`` is ``exportlens serve``.

Hover, CodeLens, inlay hints and code actions answer from the index and cached
reports only; exports run in worker processes and land asynchronously.
"""

from __future__ import annotations

import logging
import sys

from ..exporter.workers.pool import Pool
from . import commands, compat, diagnostic_pulls, document_requests, documents, lifecycle, spec_editing, stdio, trees
from .exports import PoolFactory, persistent_pool
from .index import folders
from .index.scanner import Indexer
from .server import ExportLensServer, IndexerFactory

HANDLERS = (
    lifecycle,
    folders,
    documents,
    document_requests,
    spec_editing,
    diagnostic_pulls,
    commands,
    trees,
)  # each has register(server)


def build(pool_factory: PoolFactory = persistent_pool, indexer_factory: IndexerFactory = Indexer) -> ExportLensServer:
    """A new server with every handler registered. ``pool_factory(python, jobs)`` makes the
    pool that runs exports; ``indexer_factory(folder, on_file, on_done)`` starts the scan of
    a workspace folder. Tests hand in their own."""
    compat.fast_incremental_edits()
    server = ExportLensServer(pool_factory, indexer_factory)
    for module in HANDLERS:
        module.register(server)
    return server


def main(early: Pool | None = None) -> None:
    """``exportlens serve``; ``early``: the pool launch.py started before these imports."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    compat.quiet_refusals()  # a refusal we answer in words is no traceback in the editor's output
    server = build(_taking(early) if early is not None else persistent_pool)
    # torch imports in the warm parent (no workspace code: docs/workers.md) while the client
    # starts up; `initialized` keeps it, restarts it for the client's python or jobs, or ends it
    server.exports.start_pool()
    stdio.serve(server)


def _taking(early: Pool) -> PoolFactory:
    """``persistent_pool``, except that a first call for ``early``'s python and jobs gets ``early``."""
    kept: list[Pool] = [early]

    def factory(python: str, jobs: int) -> Pool:
        if kept:
            pool = kept.pop()
            if (pool.python, pool.jobs) == (python, jobs):
                return pool
            pool.close()
        return persistent_pool(python, jobs)

    return factory
