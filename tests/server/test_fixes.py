"""Every quick fix, applied as the editor applies it, moves the module past its problem."""

from __future__ import annotations

from lsprotocol import types

PROBLEMS = {
    "models/router.py": ("EL101", "TokenRouter"),
    "models/positional.py": ("EL201", "LearnedPositions"),
    "models/fusion.py": ("EL202", "GatedFusion"),
    "models/head.py": ("EL204", "ClassifierHead"),
}


async def quick_fixes(editor, rel: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(editor.uri(rel)),
        diagnostic.range,
        types.CodeActionContext([diagnostic], only=[types.CodeActionKind.QuickFix]),
    )
    actions = await editor.client.text_document_code_action_async(params)
    return [a for a in actions or [] if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix]


async def test_preferred_fix_of_each_problem_makes_the_next_export_pass(editor):
    for rel in PROBLEMS:
        editor.open(rel)
    applied = {}
    for rel, (code, _) in PROBLEMS.items():
        found = await editor.diagnostics(rel, lambda ds, code=code: any(d.code == code for d in ds))
        diagnostic = next(d for d in found if d.code == code)
        fixes = await quick_fixes(editor, rel, diagnostic)
        assert fixes, f"no quick fix for {code} in {rel}"
        preferred = [f for f in fixes if f.is_preferred]
        assert len(preferred) == 1, [(f.title, f.is_preferred) for f in fixes]
        applied[rel] = (preferred[0].title, editor.apply(preferred[0].edit))
    # each fix lands in the file it names: Dim changes in pyproject.toml, torch._check in the model
    assert applied["models/router.py"] == ("Assume `routed > 0` here: insert torch._check(routed > 0)", ["models/router.py"])
    assert applied["models/positional.py"] == ("Set `seq` to Dim('seq', max=128)", ["pyproject.toml"])
    assert applied["models/fusion.py"][1] == ["pyproject.toml"]
    assert applied["models/head.py"][1] == ["pyproject.toml"]
    assert "torch._check(routed > 0)" in (editor.root / "models/router.py").read_text()
    for rel, (code, cls) in PROBLEMS.items():
        await editor.diagnostics(rel, lambda ds, code=code: not any(d.code == code for d in ds))
        await editor.logged(f"{rel}:{cls}: exported")
