"""Diagnostic columns in the position encoding the client negotiated: a problem after an
emoji lands on the same characters under UTF-8, UTF-16 and UTF-32."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import start, stop

ROUTER = "models/router.py"
CONDITION = "routed > 0"
EMOJI_LINE = f'        if "🚀🚀" and {CONDITION}:'  # each 🚀 is 4 UTF-8 bytes, 2 UTF-16 units, 1 code point
CODECS = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}
UNIT = {"utf-8": 1, "utf-16": 2, "utf-32": 4}  # bytes per code unit


def underlined(line: str, encoding: str, start: int, end: int) -> str:
    """What an editor using ``encoding`` underlines for columns ``start..end`` of ``line``."""
    data = line.encode(CODECS[encoding])
    return data[start * UNIT[encoding] : end * UNIT[encoding]].decode(CODECS[encoding])


SPEC_LINE = 'dims = { note = "🚀🚀", tokens = { min = 9, max = 3 } }'  # the router's dims, broken after an emoji


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.slow
async def test_a_spec_problem_after_an_emoji_is_underlined_where_it_is(workspace, encoding):
    """Static findings (no export: the server starts no worker in manual mode)."""
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("dims = { tokens = { min = 2, max = 1024 } }", SPEC_LINE))
    editor = await start(workspace, encodings=[encoding], exportOn="manual")
    try:
        assert editor.encoding == encoding
        found = await editor.diagnostics("pyproject.toml", lambda ds: any("dim 'tokens'" in d.message for d in ds))
        d = next(d for d in found if "dim 'tokens'" in d.message)
        assert d.range.start.line == editor.line_of("pyproject.toml", SPEC_LINE)
        assert underlined(SPEC_LINE, encoding, d.range.start.character, d.range.end.character) == "tokens"
    finally:
        await stop(editor)


@pytest.mark.parametrize("encoding", ["utf-8"])  # the encoding a column was once wrong in; the others as above
@pytest.mark.slow
async def test_a_problem_after_an_emoji_is_underlined_where_it_is(workspace, encoding):
    router = workspace / ROUTER
    router.write_text(router.read_text().replace(f"        if {CONDITION}:", EMOJI_LINE))
    editor = await start(workspace, encodings=[encoding])
    try:
        assert editor.encoding == encoding
        editor.open(ROUTER)
        found = await editor.diagnostics(ROUTER, lambda ds: any(d.code == "EL101" for d in ds))
        d = next(d for d in found if d.code == "EL101")
        assert d.range.start.line == editor.line_of(ROUTER, EMOJI_LINE.strip())
        before = EMOJI_LINE[: EMOJI_LINE.index(CONDITION)]
        assert d.range.start.character == len(before.encode(CODECS[encoding])) // UNIT[encoding]  # utf-8: 26, not 22
        assert underlined(EMOJI_LINE, encoding, d.range.start.character, d.range.end.character) == CONDITION
    finally:
        await stop(editor)


async def test_a_byte_order_mark_in_the_editors_buffer_is_no_code(workspace):
    """An editor may keep a file's BOM in its buffer: it is no syntax error, and a problem
    on the first line is underlined where it is, the BOM counted as the client counts it."""
    editor = await start(workspace, exportOn="manual")
    try:
        rel = "models/bom.py"
        (workspace / rel).write_text("\ufeffx = (\n")  # a real syntax error on line 1, after the BOM
        uri = editor.open(rel)
        found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL401" for d in ds))
        (d,) = found
        assert "U+FEFF" not in d.message and "never closed" in d.message
        assert (d.range.start.line, d.range.start.character) == (0, len("\ufeffx = "))  # on the bracket
        editor.change(
            rel, "\ufeffimport torch\n\n\nclass Fine(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        )
        await editor.diagnostics(rel, lambda ds: not ds)
        lenses = await editor.client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(uri))
        )
        assert [lens.range.start.line for lens in lenses] == [3]  # the class is a module
    finally:
        await stop(editor)
