"""A derived size in pyproject.toml is the workspace's text, and the server reads specs
(no torch, no trust needed): one that would have sympy compute without end
(``10**10**10*batch``) is EL005 on its line at once, in an untrusted workspace too, and
the server answers after it."""

from __future__ import annotations

import shutil
from pathlib import Path

from server.conftest import EXAMPLES, start, stop

HUGE = "10**10**10*batch"


async def test_an_untrusted_server_says_el005_on_a_huge_derived_size_and_keeps_answering(tmp_path: Path):
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    editor = await start(root, trusted=False)
    try:
        await editor.logged(f"indexed {root.resolve()}")
        text = (root / "pyproject.toml").read_text()
        huge = text.replace('inputs = { x = "f32[batch, 16]" }', f'inputs = {{ x = "f32[{HUGE}, 16]" }}', 1)
        assert huge != text
        line = huge.splitlines().index(f'inputs = {{ x = "f32[{HUGE}, 16]" }}')  # 0-based, as LSP counts
        editor.open("pyproject.toml")
        editor.change("pyproject.toml", huge)
        found = await editor.diagnostics("pyproject.toml", lambda ds: any(d.code == "EL005" for d in ds))
        (d,) = [d for d in found if d.code == "EL005"]
        assert d.range.start.line == line
        assert f"size '{HUGE}'" in d.message and "derived size exportlens does not compute" in d.message
        assert (await editor.status())["trusted"] is False  # and it still answers
    finally:
        await stop(editor)
