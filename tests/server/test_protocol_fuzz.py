"""A real ``exportlens serve`` fed generated garbage over stdio (hypothesis): frames of every
length, bodies that are no JSON or nest too deep, messages of every shape and params of
every type, to every method it serves. After each batch it answers ``exportlens/status``,
and no message it sent, in the whole run, holds a Python frame. The workspace is
untrusted: no method runs its code, and no torch is imported."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .raw import NET, PYPROJECT, Raw, frame, framed, python_frames

# every method the server serves, and some it does not: shutdown and exit end the session
# (the last test sends them), setTrusted would start torch, and a workspace folder of "/"
# would index the machine
METHODS = [
    "initialize",
    "initialized",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "textDocument/hover",
    "textDocument/inlayHint",
    "textDocument/codeLens",
    "textDocument/codeAction",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/diagnostic",
    "workspace/diagnostic",
    "workspace/executeCommand",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWatchedFiles",
    "exportlens/status",
    "exportlens/program",
    "exportlens/checkWorkspace",
    "$/cancelRequest",
    "$/setTrace",
    "window/workDoneProgress/cancel",
    "exportlens/nothing",
    "$/nothing",
]

# text without a double quote: the server may quote what it was sent, and a quote is half of
# a Python frame's mark (File "...")
_text = st.text(st.characters(blacklist_characters='"', blacklist_categories=["Cs"]), max_size=12)
_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | _text
_json = st.recursive(
    _scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=10
)
_ids = (
    st.integers(-5, 10**6)
    | st.text(max_size=5)
    | st.none()
    | st.booleans()
    | st.floats()
    | st.lists(st.integers(), max_size=2)
    | st.just({})
)
_ints = st.sampled_from([0, 1, 3, 5, -1, 2**31, 2**64]) | st.integers(-(2**40), 2**40) | _scalar


def _params(root: Path) -> st.SearchStrategy:
    files = ["net.py", "pyproject.toml", "missing.py", "a" * 300 + ".py", "dir/../net.py"]
    uris = (
        st.sampled_from(
            [(root / f).as_uri() for f in files] + ["file:///%00.py", "untitled:x", "", "file://", "http://x/net.py"]
        )
        | _scalar
    )
    position = st.fixed_dictionaries({"line": _ints, "character": _ints}) | _json
    span = st.fixed_dictionaries({"start": position, "end": position}) | _json
    document = st.fixed_dictionaries(
        {"uri": uris}, optional={"version": _ints, "text": st.just(NET) | _text, "languageId": _text}
    )
    lsp = st.fixed_dictionaries(
        {},
        optional={
            "textDocument": document | _json,
            "position": position,
            "range": span,
            "context": st.fixed_dictionaries({"diagnostics": st.lists(_json, max_size=2)}) | _json,
            "contentChanges": st.lists(
                st.fixed_dictionaries({"text": _text}, optional={"range": span}) | _json, max_size=2
            ),
            "command": st.sampled_from(["exportlens.exportModule", "exportlens.createSpec", "nothing"]) | _scalar,
            "arguments": st.none()
            | st.lists(
                st.fixed_dictionaries({"uri": uris}, optional={"line": _ints, "target": _text}) | _json, max_size=2
            ),
            "uri": uris,
            "line": _ints,
            "target": st.just("net.py:Net") | _text,
            "settings": _json,
            "id": _ids,
            "newName": _text,
            "capabilities": _json,
        },
    )
    return lsp | _json


def _messages(root: Path) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", None, 2]),
            "id": _ids,
            "method": st.sampled_from(METHODS) | _scalar,
            "params": _params(root),
            "result": _json,
            "error": st.fixed_dictionaries({"code": _ints, "message": _text}) | _json,
        },
    )


def _frames(root: Path) -> st.SearchStrategy:
    messages = _messages(root)
    deep = st.integers(100, 400).map(
        lambda d: framed(
            f'{{"jsonrpc": "2.0", "id": 5, "method": "exportlens/status", "params": {"[" * d}{"]" * d}}}'.encode()
        )
    )
    length = (
        st.integers(0, 400).map(str) | st.integers(10, 5000).map(lambda n: "9" * n) | _text
    )  # never one that waits for megabytes
    return st.one_of(
        messages.map(frame),
        st.tuples(messages, st.integers(-300, 300)).map(
            lambda m: frame(m[0], length=max(0, len(json.dumps(m[0])) + m[1]))
        ),
        deep,
        st.binary(max_size=64),
        length.map(lambda v: f"Content-Length: {v}\r\n\r\n".encode()),
        messages.map(lambda m: framed(json.dumps(m).encode()[: len(json.dumps(m)) // 2])),  # cut short
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("protocol-fuzz")
    (root / "net.py").write_text(NET)
    (root / "pyproject.toml").write_text(PYPROJECT)
    server = Raw(root)
    server.initialize(trusted=False)
    yield server
    server.stop()


def status(server: Raw, ids) -> dict:
    """exportlens/status, asked again as a client does when it gets no answer: a frame that
    claimed more bytes than it had may have swallowed the question (the padding completes
    it, and the server finds the question inside), or the start of its header."""
    asked = []
    for wait in (0.3, 2, 10):
        asked.append(f"status-{next(ids)}")
        server.send(b"\r\n\r\n")  # ends a header the garbage may have left open
        server.request(asked[-1], "exportlens/status", {})
        try:
            return server.reply(asked[-1], timeout=wait)
        except AssertionError:
            server.send(b" " * 512)  # more than any length the garbage claims
    for message in server.received:
        if isinstance(message, dict) and message.get("id") in asked:
            return message
    raise AssertionError(f"{asked} went unanswered")


_ids_used = count()


@pytest.mark.slow  # 250 batches of garbage (13 s); test_protocol.py sends each kind of broken frame quickly
@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_after_any_garbage_the_server_answers_and_never_shows_a_python_frame(served, data):
    batch = data.draw(st.lists(_frames(served.root), min_size=1, max_size=6), label="frames")
    before = len(served.received)
    for chunk in batch:
        served.send(chunk)
    reply = status(served, _ids_used)
    assert reply["result"]["trusted"] is False, reply
    assert served.proc.poll() is None
    assert [python_frames(m) for m in served.received[before:] if python_frames(m)] == []


def test_after_the_garbage_shutdown_and_exit_end_it_cleanly(served):
    served.request("last", "shutdown")
    assert served.reply("last")["result"] is None
    served.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert served.proc.wait(60) == 0  # it ends its warm worker first
    assert [python_frames(m) for m in served.received if python_frames(m)] == []
