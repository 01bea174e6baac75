"""A module's problems belong to the spec it was exported with: once its table changes,
turns invalid, or goes (with its variants), what the last export found is no longer shown."""

from __future__ import annotations

import pytest

HEAD = "models/head.py"
POSITIONAL = "models/positional.py"
HEAD_TABLE = """[tool.exportlens.modules."models/head.py:ClassifierHead"]
init = { hidden = 16, classes = 10 }
inputs = { x = "f32[batch, 16]" }
dims = { batch = { min = 1, max = 256, example = 4 } }
"""
VARIANTS = """
[[tool.exportlens.modules."models/positional.py:LearnedPositions".variants]]
name = "long"
dims = { seq = { min = 2, max = 1024 } }

[[tool.exportlens.modules."models/positional.py:LearnedPositions".variants]]
name = "broken"
init = { max_len = "many" }
"""


@pytest.mark.parametrize(
    "table",
    [
        pytest.param(HEAD_TABLE.replace('"f32[batch, 16]"', '"f99[batch, 16]"'), id="invalid"),
        pytest.param("", id="removed"),
    ],
)
async def test_a_module_whose_spec_turns_invalid_or_goes_keeps_no_old_problem(editor, table):
    editor.open(HEAD)
    await editor.diagnostics(HEAD, lambda ds: any(d.code == "EL204" for d in ds))
    editor.open("pyproject.toml")
    spec = editor.texts[editor.uri("pyproject.toml")]
    assert HEAD_TABLE in spec
    editor.save("pyproject.toml", spec.replace(HEAD_TABLE, table))
    await editor.diagnostics(HEAD, lambda ds: not any(d.code == "EL204" for d in ds), timeout=30)
    if table:  # the spec error is shown where it is, in pyproject.toml
        await editor.diagnostics("pyproject.toml", lambda ds: any("f99" in d.message for d in ds), timeout=30)


async def test_removed_variants_leave_no_problem_behind(editor):
    """A variant whose constructor fails (EL403) and one that fails to export (EL201): once
    the variants are removed, neither problem is shown, in the module or in pyproject.toml."""
    spec = (editor.root / "pyproject.toml").read_text()
    (editor.root / "pyproject.toml").write_text(spec + VARIANTS)
    editor.open(POSITIONAL)
    variants = ("LearnedPositions[long]: ", "LearnedPositions[broken]: ")
    await editor.diagnostics(
        POSITIONAL, lambda ds: {d.message.startswith(variants) for d in ds} == {True} and len(ds) == 2
    )
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", spec)
    # the class's own verdict, of its own table, and nothing of its variants'
    await editor.diagnostics(
        POSITIONAL, lambda ds: [(d.code, d.message.startswith(variants)) for d in ds] == [("EL201", False)], timeout=30
    )
    assert not [d for d in await editor.diagnostics("pyproject.toml", lambda ds: True) if d.code in ("EL403", "EL901")]


async def test_a_line_being_typed_that_breaks_the_syntax_keeps_the_modules_problems(editor):
    """While the file does not parse, what it defines is not known: its modules' problems
    stay (at their lines) beside the syntax error, rather than being taken for gone."""
    uri = editor.open(HEAD)
    await editor.diagnostics(HEAD, lambda ds: any(d.code == "EL204" for d in ds))
    editor.change(HEAD, editor.texts[uri] + "\nbroken = (\n")
    shown = await editor.diagnostics(HEAD, lambda ds: any(d.code == "EL401" for d in ds))
    assert "EL204" in [d.code for d in shown]
