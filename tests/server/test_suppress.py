"""Suppressions in the editor: "Ignore EL204 on this line" writes the comment on the line
of the diagnostic, keeping the rest of the file, and the finding it hides is no longer
published once the module is exported again."""

from __future__ import annotations

from .test_fixes import quick_fixes

REL = "models/head.py"


async def test_the_ignore_quick_fix_adds_the_comment_and_the_finding_is_no_longer_published(editor):
    editor.open(REL)
    found = await editor.diagnostics(REL, lambda ds: any(d.code == "EL204" for d in ds))
    specialized = next(d for d in found if d.code == "EL204")
    actions = await quick_fixes(editor, REL, specialized)
    ignore = next(a for a in actions if a.title == "Ignore EL204 on this line")
    assert not ignore.is_preferred  # the verified fixes come first
    before = (editor.root / REL).read_text().splitlines()
    logged = len(editor.client.log_messages)
    assert editor.apply(ignore.edit) == [REL]
    expected = list(before)
    expected[specialized.range.start.line] += "  # exportlens: ignore[EL204]"
    assert before[specialized.range.start.line] == "        flat = logits.view(4, self.classes)"
    assert (editor.root / REL).read_text().splitlines() == expected
    # the save exports it again: torch still specializes `batch`, and the user has said so
    await editor.logged(f"{REL}:ClassifierHead: failed", after=logged)
    shown = await editor.diagnostics(REL, lambda ds: not any(d.code == "EL204" for d in ds))
    assert [d.code for d in shown] == []  # nor an EL008: the comment hid the finding
