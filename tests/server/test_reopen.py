"""A workspace opened again: the last session's verdicts show at once, marked as cached
until the server has exported again (``.exportlens/cache``, workers/verdicts.py)."""

from __future__ import annotations

import pytest

from .conftest import start, stop
from .test_lenses_actions import lens_titles

POSITIONAL = "models/positional.py"


def el201(diagnostics) -> bool:
    return any(d.code == "EL201" for d in diagnostics)


@pytest.mark.slow  # a second server, starting torch again
async def test_a_reopened_workspace_shows_the_last_verdicts_at_once_then_checks_them_again(editor):
    editor.open(POSITIONAL)
    before = await editor.diagnostics(POSITIONAL, el201)

    reopened = await start(editor.root)  # the editor restarted: a new server, the same folder
    try:
        reopened.open(POSITIONAL)
        assert [d.message for d in await reopened.diagnostics(POSITIONAL, el201)] == [d.message for d in before]
        landed = "models/positional.py:LearnedPositions: failed in"
        assert (await reopened.logged(landed)).endswith("(job 1, from an earlier session's cache)")
        # the export that checks it again is still waiting for its new worker to import torch
        assert await lens_titles(reopened, POSITIONAL) == ["✗ 1 problem · cached, checking again…"]
        log = reopened.client.log_messages
        cached = next(i for i, m in enumerate(log) if m.message.endswith("cache)"))
        assert "cache" not in await reopened.logged(landed, after=cached + 1)  # exported again
        assert await lens_titles(reopened, POSITIONAL) == ["✗ 1 problem"]
    finally:
        await stop(reopened)
