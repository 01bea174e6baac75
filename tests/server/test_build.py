"""A server built explicitly: `build()` takes the factories of the worker pool and of the
workspace indexer, and what the pool answers is what the editor shows."""

from __future__ import annotations

import sys
from pathlib import Path

from .conftest import start, stop
from .fake_server import MESSAGE

FAKE = [sys.executable, str(Path(__file__).with_name("fake_server.py"))]
ROUTER = "models/router.py"


async def test_the_pool_and_indexer_handed_to_build_are_the_ones_used(workspace):
    editor = await start(workspace, server=FAKE)
    try:
        await editor.logged("indexed")
        assert (await editor.status())["files_indexed"] == 0  # the test's indexer scanned nothing
        editor.open(ROUTER)
        found = await editor.diagnostics(ROUTER, lambda ds: any(MESSAGE in d.message for d in ds))
        (d,) = [d for d in found if MESSAGE in d.message]
        assert d.message == f"{MESSAGE} (models/router.py:TokenRouter)"
        assert d.range.start.line == editor.line_of(ROUTER, "class TokenRouter")
        status = await editor.status()
        assert status["files_indexed"] == 1 and status["exports_started"] == 1
        assert status["worker_pid"] is None  # the canned pool started no worker process
    finally:
        await stop(editor)
