"""A save plans its module once: the export, each publish of diagnostics, the CodeLenses,
a hover and the code actions all take that plan (``exportlens/status``'s ``plans_built``)."""

from __future__ import annotations

import pytest
from lsprotocol import types

REL = "models/encoder.py"


@pytest.mark.slow
async def test_one_save_plans_its_module_once(editor):
    uri = editor.open(REL)
    # its verdict (a serving run follows unless this shared server ran one on the same text before)
    await editor.logged("models/encoder.py:TinyEncoder: exported")
    before = (await editor.status())["plans_built"]
    mark = len(editor.client.log_messages)
    # a line above the class moves every position the plan holds: it must be planned again
    editor.save(REL, editor.texts[uri].replace("class TinyEncoder", "# moved down\nclass TinyEncoder"))
    await editor.logged("models/encoder.py:TinyEncoder: exported in", after=mark)
    await editor.logged("models/encoder.py:TinyEncoder: ran the exported program", after=mark)
    await editor.diagnostics(REL, lambda ds: True)
    line = editor.line_of(REL, "class TinyEncoder")
    where = types.Range(types.Position(line, 6), types.Position(line, 6))
    doc = types.TextDocumentIdentifier(uri)
    await editor.client.text_document_code_action_async(types.CodeActionParams(doc, where, types.CodeActionContext([])))
    await editor.client.text_document_code_lens_async(types.CodeLensParams(doc))
    await editor.client.text_document_hover_async(types.HoverParams(doc, where.start))
    assert (await editor.status())["plans_built"] - before == 1
