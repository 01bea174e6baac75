"""A module that hangs or crashes gets its diagnostic, and the server goes on answering."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .conftest import start, stop

HANGS = """\
import torch


class Stuck(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        while True:
            pass
"""

CRASHES = """\
import ctypes

import torch


class Boom(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        print("about to crash")
        ctypes.string_at(0)
"""


@pytest.mark.slow  # waits out an export's timeout
async def test_hang_and_segfault_become_diagnostics_while_hover_answers(workspace):
    (workspace / "models/stuck.py").write_text(HANGS)
    (workspace / "models/boom.py").write_text(CRASHES)
    editor = await start(workspace, timeout=8, jobs=3)
    try:
        editor.open("models/encoder.py")
        await editor.logged("models/encoder.py:TinyEncoder: exported")
        editor.open("models/stuck.py")
        editor.open("models/boom.py")
        await editor.logged("exporting models/stuck.py:Stuck")
        # while the hanging export runs, hover on another file answers from the cache
        line = editor.line_of("models/encoder.py", "class TinyEncoder")
        hover = await asyncio.wait_for(
            editor.client.text_document_hover_async(
                types.HoverParams(
                    types.TextDocumentIdentifier(editor.uri("models/encoder.py")), types.Position(line, 8)
                )
            ),
            5,
        )
        assert "-> f32[batch, 32]" in hover.contents.value
        assert "models/stuck.py:Stuck" in (await editor.status())["running"]

        crash = await editor.diagnostics("models/boom.py", lambda ds: any(d.code == "EL502" for d in ds))
        d = next(d for d in crash if d.code == "EL502")
        assert d.range.start.line == editor.line_of("models/boom.py", "class Boom")
        assert "SIGSEGV" in d.message and "about to crash" in d.message

        hang = await editor.diagnostics("models/stuck.py", lambda ds: any(d.code == "EL501" for d in ds))
        d = next(d for d in hang if d.code == "EL501")
        assert d.range.start.line == editor.line_of("models/stuck.py", "class Stuck")
        assert "did not finish within 8 s" in d.message

        # and the server still exports the next module
        editor.open("models/router.py")
        await editor.diagnostics("models/router.py", lambda ds: any(d.code == "EL101" for d in ds))
    finally:
        await stop(editor)
