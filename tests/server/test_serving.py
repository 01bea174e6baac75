"""The exported program is run at the spec's bounds after the verdict is shown, never before:
torch proves the graph, not the model (an embedding table shorter than the declared ``seq``)."""

from __future__ import annotations

from lsprotocol import types

POSITIONS = """\
import torch
from torch import nn


class Positions(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(50, 8)
        self.pos = nn.Embedding(64, 8)

    def forward(self, ids):
        h = self.tok(ids)
        pos = torch.arange(ids.shape[1])
        return h + self.pos(pos)
"""

TABLE = """
[tool.exportlens.modules."models/positions.py:Positions"]
inputs = { ids = { shape = "i64[batch, seq]", low = 0, high = 50 } }
dims = { batch = { max = 8 }, seq = { min = 2, max = 256 } }
"""


async def test_a_range_the_program_cannot_serve_lands_after_the_verdict_with_a_proven_fix(editor):
    rel = "models/positions.py"
    (editor.root / rel).write_text(POSITIONS)
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", (editor.root / "pyproject.toml").read_text() + TABLE)
    editor.open(rel)
    uri = editor.uri("pyproject.toml")
    found = await editor.diagnostics("pyproject.toml", lambda ds: any(d.code == "EL206" for d in ds))
    (el206,) = [d for d in found if d.code == "EL206"]
    assert el206.range.start.line == editor.line_of(
        "pyproject.toml", "dims = { batch = { max = 8 }, seq = { min = 2, max = 256 } }"
    )
    assert el206.message.startswith("`seq` is declared as [2, 256], but at seq = 256 forward fails")
    # the export's own verdict was shown first: the program was run in a job of its own, afterwards
    exported = await editor.logged("models/positions.py:Positions: exported in")
    ran = await editor.logged("models/positions.py:Positions: ran the exported program at the spec's bounds: failed")
    logs = [m.message for m in editor.client.log_messages[editor.log_start :]]  # this test's: the server is shared
    assert logs.index(exported) < logs.index(ran)
    # its fix lowers the max, and was proven by exporting and running with it applied
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(uri),
        el206.range,
        types.CodeActionContext([el206], only=[types.CodeActionKind.QuickFix]),
    )

    async def titles() -> list[str]:
        now = editor.current("pyproject.toml", el206)  # as the client shows it now: the fixes in its data
        asked = types.CodeActionParams(
            params.text_document, now.range, types.CodeActionContext([now], only=params.context.only)
        )
        actions = await editor.client.text_document_code_action_async(asked)
        return [a.title for a in actions or [] if isinstance(a, types.CodeAction)]

    for _ in range(100):
        if any("(module then exports and serves its ranges)" in t for t in await titles()):
            break
        await editor.landed()  # a proof's landing is logged, and its diagnostics published
    assert "Set `seq` to Dim('seq', max=64) (module then exports and serves its ranges)" in await titles()


TWO = """\
import torch
from torch import nn


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(512, 16))

    def forward(self, x):
        b = x.shape[0]
        h = x + self.pos[: x.shape[1]]
        if b > 8:
            h = h.view(b, -1, 8)
        return h.reshape(16, -1)
"""

TWO_TABLE = """
[tool.exportlens.modules."models/two.py:Two"]
inputs = { x = "f32[batch, seq, 16]" }
dims = { batch = { max = 64 }, seq = { min = 2, max = 4096 } }
"""


async def test_the_editors_fix_converges_to_one_that_exports_and_serves(editor):
    """The proof goes round after round in the server too (workers/converge.py): the quick fix
    on the first problem is all three edits, and says that it exports and serves."""
    rel = "models/two.py"
    (editor.root / rel).write_text(TWO)
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", (editor.root / "pyproject.toml").read_text() + TWO_TABLE)
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL201" for d in ds))
    first = min((d for d in found if d.code == "EL201"), key=lambda d: d.range.start.line)
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(editor.uri(rel)),
        first.range,
        types.CodeActionContext([first], only=[types.CodeActionKind.QuickFix]),
    )

    async def actions() -> list[types.CodeAction]:
        now = editor.current(rel, first)  # as the client shows it now: the fixes in its data
        asked = types.CodeActionParams(
            params.text_document, now.range, types.CodeActionContext([now], only=params.context.only)
        )
        return [
            a
            for a in await editor.client.text_document_code_action_async(asked) or []
            if isinstance(a, types.CodeAction)
        ]

    for _ in range(100):
        if any("serves its ranges" in a.title for a in await actions()):
            break
        await editor.landed()  # a proof's landing is logged, and its diagnostics published
    (fix,) = [a for a in await actions() if a.is_preferred]
    assert fix.title == (
        "Set `seq` to Dim('seq', max=512); then set `batch` to Dim('batch', max=8);"
        " then write `h.flatten().reshape(...)`, which needs no guard on the sizes"
        " (module then exports and serves its ranges)"
    )
