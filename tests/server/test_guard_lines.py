"""The guard record in the editor (issue 39): a line's hover lists the guards it added to the
exported program, and an inlay hint ends each line that constrains a dynamic dim, in the
spec's dim names (a ``?`` size as the code reads it: ``extra.shape[0]``)."""

from __future__ import annotations

import re

from lsprotocol import types

from exportlens.exporter.core.guards import Guard, GuardKind
from exportlens.server.features.guard_lines import hint_label, hover_text

MIXER = "models/strided_mixer.py"
MIXER_TEXT = """\
import torch
from torch import nn


class StridedMixer(nn.Module):
    def forward(self, tokens, extra, width):
        torch._check(extra.shape[0] <= 128)
        mixed = tokens + extra
        widened = mixed + width.sum(0)
        return widened * 3
"""
MIXER_TABLE = """
[tool.exportlens.modules."models/strided_mixer.py:StridedMixer"]
inputs = { tokens = "f32[rows, 8]", extra = "f32[?, 8]", width = "f32[2, ?]" }
dims = { rows = { min = 2, max = 96 } }
"""
TORCH_SYMBOL = re.compile(r"\b(?:[su]|zuf)\d+\b|L\[")


async def exported(editor) -> str:
    (editor.root / MIXER).write_text(MIXER_TEXT)
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", (editor.root / "pyproject.toml").read_text() + MIXER_TABLE)
    uri = editor.open(MIXER)
    await editor.logged(f"{MIXER}:StridedMixer: exported")
    return uri


async def hover(editor, uri: str, line: int) -> str:
    result = await editor.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 10))
    )
    assert result is not None, f"no hover on line {line}"
    return result.contents.value


async def test_hover_on_a_line_lists_the_guards_it_made_in_dim_names(editor):
    uri = await exported(editor)
    check = await hover(editor, uri, editor.line_of(MIXER, "torch._check(extra.shape[0] <= 128)"))
    assert check.endswith("Guards from this line: `extra.shape[0] <= 128` (range)")
    mixed = await hover(editor, uri, editor.line_of(MIXER, "mixed = tokens + extra"))
    assert mixed == "```python\nmixed: f32[rows, 8]\n```\n\nGuards from this line: `extra.shape[0] == rows` (relation)"
    widened = await hover(editor, uri, editor.line_of(MIXER, "widened = mixed + width.sum(0)"))
    # torch records the size both as a guard and as a constant: said once, as what it did to the dim
    assert widened.endswith("Guards from this line: `width.shape[1] == 8` (specialized: a static size now)")
    assert not [t for t in (check, mixed, widened) if TORCH_SYMBOL.search(t)]
    # a line that made no guard says only its shape
    assert "Guards" not in await hover(editor, uri, editor.line_of(MIXER, "return widened * 3"))


async def test_lines_that_constrain_a_dynamic_dim_end_with_an_inlay_hint(editor):
    uri = await exported(editor)
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(50, 0))
        )
    )
    by_line: dict[int, list[str]] = {}
    for h in hints:
        by_line.setdefault(h.position.line, []).append(h.label)
    source = editor.texts[uri].splitlines()
    check = editor.line_of(MIXER, "torch._check(extra.shape[0] <= 128)")
    mixed = editor.line_of(MIXER, "mixed = tokens + extra")
    widened = editor.line_of(MIXER, "widened = mixed + width.sum(0)")
    assert by_line == {
        check: ["guard: extra.shape[0] ≤ 128"],
        mixed: ["f32[rows, 8]", "guard: extra.shape[0] = rows"],
        widened: ["f32[rows, 8]", "guard: width.shape[1] = 8 (static)"],
    }
    guard = next(h for h in hints if h.position.line == check)
    assert guard.position.character == len(source[check].rstrip())  # at the end of the line
    assert "hover the line" in guard.tooltip


async def guard_labels(editor, uri: str) -> list[str]:
    hints = await editor.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(50, 0))
        )
    )
    return sorted(h.label for h in hints)


async def test_guard_hints_have_a_setting_of_their_own_and_refuse_what_is_no_boolean(editor):
    uri = await exported(editor)
    shapes = ["f32[rows, 8]", "f32[rows, 8]"]
    guards = ["guard: extra.shape[0] = rows", "guard: extra.shape[0] ≤ 128", "guard: width.shape[1] = 8 (static)"]
    assert await guard_labels(editor, uri) == shapes + guards
    await editor.configure(guardHints="no")  # no boolean: refused, and the value it had kept
    warning = "exportlens: setting exportlens.guardHints = 'no' must be true or false; using True"
    assert warning in [m.message for m in editor.client.log_messages[editor.log_start :]]
    assert await guard_labels(editor, uri) == shapes + guards
    await editor.configure(guardHints=False)
    assert await guard_labels(editor, uri) == shapes  # the shapes stay: they are inlayHints'


def test_a_check_on_a_value_read_from_data_is_listed_but_marks_no_line_and_long_hints_are_cut():
    """``torch._check(k <= 256)`` on ``k = ....item()`` bounds no input's size: the hover lists
    it, no hint marks its line; a line with many guards gets a hint of 60 characters at most."""
    check = Guard(GuardKind.RUNTIME_ASSERT, "k <= 256", "count.py", 7)
    assert hover_text([check]) == "Guards from this line: `k <= 256` (checked when the program runs)"
    assert hint_label([check]) is None
    many = [Guard(GuardKind.RANGE, f"tokens.shape[{i}] <= 4096", "wide.py", 3) for i in range(4)]
    label = hint_label(many)
    assert label.startswith("guards: tokens.shape[0] ≤ 4096, tokens.shape[1] ≤ 4096") and label.endswith("…")
    assert len(label) == 60
