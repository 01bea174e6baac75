"""No message freezes the server: a module whose forward raises an exception with a long,
pathological one-line text (a megabyte, ``*a `` or ``File "`` repeated, nested brackets,
backslashes, unicode) gets its diagnostic, its hover answers for a markdown and for a
plain-text client, and the server goes on answering requests."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .conftest import capabilities, start, stop

# class name -> the Python expression its forward raises RuntimeError with
MESSAGES = {
    "Stars": '"*a " * 60000',  # emphasis that never closes: a backtracking regex retries every `*`
    "Frames": "'File \"' * 150000",  # a frame location that never ends: the same in the outgoing writer
    "Located": "'File \"x\", line 1 ' * 30000",  # frame marks the writer does cut, on one line
    "Megabyte": '"x" * 1_000_000',  # a megabyte on one line (validate.py refuses texts past 1 MiB)
    "Brackets": '"[{(" * 100000 + ")}]" * 100000',
    "Backslashes": '"\\\\" * 200001 + "\\"" * 1000',
    "Unicode": '"é𝄞\\u2028\\u0085\\r" * 50000',  # astral, and line breaks that are not LSP's
    "Backticks": '"`*a* " * 50000 + "```" + "**b " * 50000',
}
# cut to 4,000 characters; not: one that quotes frame locations (the writer cuts them, no Python
# frame is shown), and one whose first line is short (a message is its exception's first line)
CUT = set(MESSAGES) - {"Located", "Unicode"}

MODULE = """\
import torch


class {name}(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        raise RuntimeError({text})
"""


def write_modules(editor) -> list[str]:
    rels = []
    for name, text in MESSAGES.items():
        rel = f"models/long_{name.lower()}.py"
        (editor.root / rel).write_text(MODULE.format(name=name, text=text))
        rels.append(rel)
    return rels


async def answers(editor, rel: str, name: str) -> types.Hover:
    """The class's hover and the server's status, each answered while nothing else is asked."""
    line = editor.line_of(rel, f"class {name}")
    hover = await asyncio.wait_for(
        editor.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(editor.uri(rel)), types.Position(line, 8))
        ),
        30,
    )
    await asyncio.wait_for(editor.status(), 30)
    return hover


async def check_every_message(editor, kind: types.MarkupKind) -> None:
    rels = write_modules(editor)
    for rel in rels:
        editor.open(rel)
    for rel, name in zip(rels, MESSAGES):
        found = await editor.diagnostics(rel, lambda ds: any(d.severity == types.DiagnosticSeverity.Error for d in ds))
        d = next(d for d in found if d.severity == types.DiagnosticSeverity.Error)
        assert d.range.start.line == editor.line_of(rel, "raise RuntimeError")
        assert "RuntimeError" in d.message
        hover = await answers(editor, rel, name)
        assert hover is not None and hover.contents.kind == kind
        assert name in hover.contents.value and "RuntimeError" in hover.contents.value
        # the message is cut where it enters the server, and says how long it was
        assert len(d.message) < 10_000, name
        assert d.message.endswith("characters in all)") == (name in CUT), (name, d.message[-200:])
        assert len(hover.contents.value) < 20_000
    running = (await editor.status())["running"]
    assert not any("long_" in t for t in running)


@pytest.mark.slow  # eight real exports
async def test_long_messages_are_published_and_hovered_for_a_markdown_client(editor):
    await check_every_message(editor, types.MarkupKind.Markdown)


@pytest.mark.slow  # a server of its own, and eight real exports
async def test_long_messages_are_hovered_for_a_plain_text_client(workspace):
    caps = capabilities()
    caps.text_document.hover = types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])
    editor = await start(workspace, caps=caps)
    try:
        await editor.logged(f"indexed {workspace.resolve()}")
        await check_every_message(editor, types.MarkupKind.PlainText)
    finally:
        await stop(editor)
