"""Diagnostics land on the user's lines, with codes, docs links and related spec lines."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from exportlens.exporter.core.codes import docs_url


async def test_each_example_problem_lands_on_its_line(editor):
    expected = {
        "models/router.py": ("EL101", "if routed > 0", "routed > 0"),
        "models/positional.py": ("EL201", "if seq > self.max_len", None),
        "models/fusion.py": ("EL202", "torch.cat", None),
        "models/head.py": ("EL204", "view(4", None),
    }
    for rel in expected:
        editor.open(rel)
    for rel, (code, needle, covered) in expected.items():
        found = await editor.diagnostics(rel, lambda ds, code=code: any(d.code == code for d in ds))
        d = next(d for d in found if d.code == code)
        assert d.range.start.line == editor.line_of(rel, needle), (rel, d)
        assert d.source == "exportlens"
        assert d.severity == types.DiagnosticSeverity.Error
        assert d.code_description.href == docs_url(code)
        assert "s77" not in d.message and "u0" not in d.message
        if covered:
            line = editor.texts[editor.uri(rel)].splitlines()[d.range.start.line]
            assert line[d.range.start.character : d.range.end.character] == covered


async def test_a_constraint_violation_points_at_its_spec(editor):
    editor.open("models/positional.py")
    found = await editor.diagnostics("models/positional.py", lambda ds: any(d.code == "EL201" for d in ds))
    (related,) = next(d for d in found if d.code == "EL201").related_information
    assert related.location.uri == editor.uri("pyproject.toml")
    assert related.message == "the export spec for LearnedPositions"
    spec_lines = (editor.root / "pyproject.toml").read_text().splitlines()
    assert (
        "LearnedPositions" in spec_lines[related.location.range.start.line]
        or "seq" in spec_lines[related.location.range.start.line]
    )


async def test_spec_errors_land_on_their_pyproject_line_as_you_type(editor):
    editor.open("pyproject.toml")
    text = editor.texts[editor.uri("pyproject.toml")]
    editor.change(
        "pyproject.toml", text.replace('inputs = { x = "f32[tokens, 16]" }', 'inputs = { x = "f33[tokens, 16]" }')
    )
    found = await editor.diagnostics("pyproject.toml", lambda ds: any(d.code == "EL002" for d in ds))
    d = next(d for d in found if d.code == "EL002")
    line = editor.texts[editor.uri("pyproject.toml")].splitlines()[d.range.start.line]
    assert "f33[tokens, 16]" in line
    assert "f33" in d.message
    # fixed again: the diagnostic goes
    editor.change("pyproject.toml", text)
    await editor.diagnostics("pyproject.toml", lambda ds: not any(d.code == "EL002" for d in ds))


async def test_a_squiggle_stays_on_the_saved_verdict_through_unsaved_edits_of_its_line(editor):
    """We export on save: until the next verdict, a finding follows the text it was found in,
    its own line edited included (as a fix applied but not saved yet), as the CodeLens and
    the status bar still say it fails; it moves with the lines typed above it."""
    router = "models/router.py"
    uri = editor.open(router)
    (first,) = [d for d in await editor.diagnostics(router, lambda ds: any(d.code == "EL101" for d in ds))]
    text = editor.texts[uri]
    assert text.splitlines()[first.range.start.line].strip() == "if routed > 0:"
    editor.change(router, "# typed above\n" + text.replace("if routed > 0:", "if routed >= 1:"))

    async def republished() -> list[types.Diagnostic]:
        while not any(u == uri and v == 2 for u, v, _ in editor.client.published):
            await editor.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return next(ds for u, v, ds in reversed(editor.client.published) if u == uri and v == 2)

    (kept,) = await asyncio.wait_for(republished(), 30)
    assert (kept.code, kept.message) == (first.code, first.message)
    assert kept.range.start.line == first.range.start.line + 1  # the edited line, one lower
    assert editor.texts[uri].splitlines()[kept.range.start.line].strip() == "if routed >= 1:"
