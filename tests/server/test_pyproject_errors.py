"""A pyproject.toml tomlkit refuses in a way of its own (a key written twice raises
KeyAlreadyPresent, not ParseError) is EL006 on its line in the editor, as on the command
line, and the workspace check answers instead of sending a traceback."""

from __future__ import annotations

from typing import Any


def plain(result: Any) -> Any:
    return {k: plain(v) for k, v in result._asdict().items()} if hasattr(result, "_asdict") else result


async def test_a_key_written_twice_is_el006_on_its_line_and_the_workspace_check_answers(editor):
    text = (editor.root / "pyproject.toml").read_text()
    twice = text.replace("strict = false\n", 'strict = false\ndevice = "meta"\n', 1)
    line = twice.splitlines().index('device = "meta"')  # 0-based, as LSP counts
    editor.open("pyproject.toml")
    editor.save("pyproject.toml", twice)
    (d,) = await editor.diagnostics("pyproject.toml", lambda ds: [x.code for x in ds] == ["EL006"])
    assert (d.range.start.line, d.range.start.character) == (line, 0)
    assert d.message == f'pyproject.toml does not parse: Key "device" already exists at line {line + 1} col 1'
    summary = plain(await editor.client.protocol.send_request_async("exportlens/checkWorkspace", {}))
    assert summary == {"modules": 0, "exported": 0, "failed": 0, "findings": 0}  # no module is read from a broken spec
    assert [x.code for x in editor.client.diagnostics[editor.uri("pyproject.toml")]] == ["EL006"]
