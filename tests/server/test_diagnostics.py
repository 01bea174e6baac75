"""Diagnostics land on the user's lines, with codes, docs links and related spec lines."""

from __future__ import annotations

from lsprotocol import types

from exportlens.exporter.codes import docs_url


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
