"""A file whose name is not UTF-8 (byte 0xff) beside the examples' modules: the untrusted
server's index still holds every other module (the scan once ended at that name)."""

from __future__ import annotations

import os

from lsprotocol import types

from .conftest import start, stop

# a module of its own, which no one can import by that name: not found
MODULE = "from torch import nn\n\n\nclass Hidden(nn.Module):\n    def forward(self, x):\n        return x\n"


async def test_the_index_holds_every_module_beside_a_name_that_is_not_utf8(workspace):
    (workspace / "models" / os.fsdecode(b"hidden\xff.py")).write_text(MODULE)
    editor = await start(workspace, trusted=False)
    try:
        # the examples' five modules, in their five files and the one whose name is reported (EL401)
        said = await editor.logged(f"indexed {workspace.resolve()}: ")
        assert said.endswith(f"indexed {workspace.resolve()}: 5 modules in 6 files")
        lenses = await editor.client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(editor.open("models/router.py")))
        )
        assert [lens.command.title for lens in lenses] == ["▶ Export (workspace not trusted)"]
    finally:
        await stop(editor)
