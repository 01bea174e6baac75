"""Keystrokes that queued up while the server was busy are handled as one ``didChange``
(``keystrokes.folded``, issue 40: a status request sent after 2,000 of them waited up to a
second): the document ends with the text and version that handling them one by one gives,
and a run of typed characters is one change."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

from exportlens.server import compat
from exportlens.server.keystrokes import folded

compat.fast_incremental_edits()

URIS = ["file:///a.py", "file:///b.py"]
TEXT = "def f(x):\n    return x  # é🚀\n\nclass M:\n    pass\n"


def change(uri: str, version: int, *changes: dict[str, Any]) -> dict[str, Any]:
    document = {"uri": uri, "version": version}
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {"textDocument": document, "contentChanges": list(changes)},
    }


def insert(line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


def applied(messages: list[Any], encoding: str) -> dict[str, tuple[str, int | None]]:
    """Each document's text and version after ``messages``, applied as pygls applies them."""
    docs = {uri: TextDocument(uri, TEXT, version=1, sync_kind=types.TextDocumentSyncKind.Incremental) for uri in URIS}
    for doc in docs.values():
        doc._position_codec = PositionCodec(encoding)
    for message in messages:
        if message.get("method") != "textDocument/didChange":
            continue
        params = message["params"]
        doc = docs[params["textDocument"]["uri"]]
        for c in params["contentChanges"]:
            if "range" in c:
                r = c["range"]
                rng = types.Range(types.Position(**r["start"]), types.Position(**r["end"]))
                doc.apply_change(types.TextDocumentContentChangePartial(range=rng, text=c["text"]))
            else:
                doc.apply_change(types.TextDocumentContentChangeWholeDocument(text=c["text"]))
        doc.version = params["textDocument"]["version"]
    return {uri: (d.source, d.version) for uri, d in docs.items()}


EDIT = st.one_of(
    st.tuples(
        st.just("type"), st.sampled_from(URIS), st.integers(0, 5), st.integers(0, 14), st.sampled_from("ab é🚀\n\t")
    ),
    st.tuples(st.just("delete"), st.sampled_from(URIS), st.integers(0, 5), st.integers(0, 14), st.integers(0, 3)),
    st.tuples(st.just("whole"), st.sampled_from(URIS), st.just(0), st.just(0), st.sampled_from(["x = 1\n", ""])),
    st.tuples(st.just("status"), st.just(""), st.just(0), st.just(0), st.just(0)),
)


def messages_of(edits: list[tuple[str, str, int, int, Any]]) -> list[Any]:
    out: list[Any] = []
    for version, (kind, uri, line, character, what) in enumerate(edits, start=2):
        if kind == "type":
            out.append(change(uri, version, insert(line, character, what)))
        elif kind == "delete":
            r = {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + what}}
            out.append(change(uri, version, {"range": r, "text": ""}))
        elif kind == "whole":
            out.append(change(uri, version, {"text": what}))
        else:
            out.append({"jsonrpc": "2.0", "id": version, "method": "exportlens/status", "params": {}})
    return out


@settings(max_examples=300, deadline=None)
@given(edits=st.lists(EDIT, max_size=12), encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_folded_keystrokes_leave_the_text_handling_them_one_by_one_leaves(edits, encoding):
    messages = messages_of(edits)
    assert applied(folded(messages), encoding) == applied(messages, encoding)


def test_a_run_of_typed_characters_is_one_change_and_other_messages_keep_their_place():
    typed = [change(URIS[0], 2 + n, insert(1, 12 + n, ch)) for n, ch in enumerate("foo(x)")]
    status = {"jsonrpc": "2.0", "id": 7, "method": "exportlens/status", "params": {}}
    other = change(URIS[1], 2, insert(0, 0, "#"))
    out = folded([*typed, status, *typed[:2], other])
    assert [m.get("method") for m in out] == [
        "textDocument/didChange",
        "exportlens/status",
        "textDocument/didChange",
        "textDocument/didChange",
    ]
    assert out[0]["params"] == {
        "textDocument": {"uri": URIS[0], "version": 7},
        "contentChanges": [insert(1, 12, "foo(x)")],
    }
    assert out[1] is status and out[3] is other


def test_what_is_not_a_well_formed_change_is_left_for_the_server_to_refuse():
    good = change(URIS[0], 2, insert(0, 0, "a"))
    odd = [
        {**good, "id": 1},  # a request, not a notification
        {**good, "params": {**good["params"], "contentChanges": [{"text": 1}]}},
        {**good, "params": {**good["params"], "textDocument": {"uri": URIS[0], "version": "2"}}},
        {**good, "params": {**good["params"], "extra": True}},
        change(
            URIS[0],
            3,
            {"range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}, "text": ""},
        ),
        "not an object",
    ]
    for message in odd:
        assert folded([good, message]) == [good, message]
        assert folded([message, good]) == [message, good]
