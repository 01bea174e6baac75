"""A module whose only spec is jaxtyping annotations on forward, in the editor: its problem
lands on the code line in the annotation's dim name, and an axis exportlens cannot build
lands on the annotation itself."""

from __future__ import annotations

ANNOTATED = """\
from jaxtyping import Float
from torch import Tensor, nn


class Classifier(nn.Module):
    def forward(self, x: Float[Tensor, "batch 12"]) -> Tensor:
        logits = x[:, :3]
        return logits.reshape(4, 3)
"""


async def test_an_annotated_module_gets_diagnostics_in_its_axis_names(editor):
    rel = "models/annotated.py"
    (editor.root / rel).write_text(ANNOTATED)
    editor.open(rel)
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL204" for d in ds))
    d = next(d for d in found if d.code == "EL204")
    assert d.range.start.line == editor.line_of(rel, "reshape(4")
    assert d.message.startswith("`batch` was declared dynamic but was specialized to 4")
    (related,) = d.related_information
    assert related.location.uri == editor.uri(rel)
    assert related.location.range.start.line == editor.line_of(rel, "def forward")  # the annotation is the spec

    editor.save(rel, ANNOTATED.replace('"batch 12"', '"*batch 12"'))
    found = await editor.diagnostics(rel, lambda ds: any(d.code == "EL003" for d in ds))
    d = next(d for d in found if d.code == "EL003")
    line = editor.texts[editor.uri(rel)].splitlines()[d.range.start.line]
    assert line[d.range.start.character : d.range.end.character] == "*batch"
    assert "`*batch` stands for any number of axes" in d.message
