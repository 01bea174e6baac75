"""A request we refuse in words (a rename where no dim is) is answered with that sentence,
and the server's stderr, which an editor shows as its output, holds no traceback for it:
pygls logs every refusal with its traceback unless told not to (server/compat.py)."""

from __future__ import annotations

from .raw import PYPROJECT, Raw


def test_a_refused_rename_is_its_sentence_and_no_traceback_in_the_output(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    server = Raw(tmp_path)
    try:
        server.initialize(trusted=False)
        doc = {"uri": (tmp_path / "pyproject.toml").as_uri(), "languageId": "toml", "version": 1, "text": PYPROJECT}
        server.notify("textDocument/didOpen", {"textDocument": doc})
        server.request(
            7,
            "textDocument/prepareRename",
            {"textDocument": {"uri": doc["uri"]}, "position": {"line": 0, "character": 1}},
        )
        answer = server.reply(7)
    finally:
        log = server.stop()
    refused = answer.get("error") or {}
    assert answer.get("result") is None and refused.get("message"), answer
    assert "Traceback" not in log and "JsonRpc" not in log, log
