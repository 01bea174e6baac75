"""The server over raw stdio, as a broken or hostile client drives it: every request it can
parse is answered with the right code, broken frames are skipped, and a hover still gets
its answer afterwards. No pytest-lsp here: it only sends well-formed frames."""

from __future__ import annotations

import io
import json
import random
import sys
import time
import traceback
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, JsonRpcInternalError

from exportlens.server.app import build
from exportlens.server.outgoing import Outgoing

from .raw import NET, PYPROJECT, Raw, frame, framed, python_frames


@pytest.fixture
def raw(tmp_path: Path):
    server = Raw.on_net(tmp_path)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server for every broken frame and fuzz example: what earlier garbage left behind must not matter either."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "net.py").write_text(NET)
    (root / "pyproject.toml").write_text(PYPROJECT)
    server = Raw(root)
    server.initialize()
    yield server
    server.stop()


def hover_again(raw: Raw, ids) -> dict:
    """A hover, asked again as a client does when the first gets no answer: a frame that
    claimed more bytes than it had swallowed the first one."""
    try:
        reply = raw.hover(next(ids), timeout=2)
    except AssertionError:
        reply = raw.hover(next(ids))
    return raw.hover(next(ids)) if "error" in reply else reply


def hovered(reply: dict) -> str:
    return reply["result"]["contents"]["value"]


def test_requests_before_initialize_are_refused_with_32002(raw):
    raw.hover(1)  # id 1: answered before initialize
    assert raw.reply(1)["error"]["code"] == -32002
    raw.request(2, "workspace/executeCommand", {"command": "exportlens.exportModule", "arguments": []})
    error = raw.reply(2)["error"]
    assert error["code"] == -32002 and "initialize" in error["message"] and "data" not in error
    raw.request(
        3,
        "initialize",
        {"capabilities": {}, "rootUri": raw.root.as_uri(), "initializationOptions": {"exportOn": "manual"}},
    )
    assert "result" in raw.reply(3)
    raw.open()
    assert "**Net**" in hovered(raw.hover(4))


@pytest.mark.parametrize(
    "broken",
    [
        b"Content-Length: abc\r\n\r\n{}",
        b"Content-Length: -5\r\n\r\n{}",
        b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0", "id": 50, "method": "shutdown"}',
        b"\x00\xff\xfe random bytes\r\n\r\n",
        b"Content-Length: 999999999999\r\n\r\n",
        frame({"jsonrpc": "2.0", "id": 50, "method": "shutdown"}, length=10),  # too short
        frame(
            {"jsonrpc": "2.0", "id": 50, "method": "shutdown"}, length=400
        ),  # too long: swallows the next frame's start
        b"Content-Length: 2\r\n\r\n[]",
    ],
)
@pytest.mark.slow
def test_a_broken_frame_is_skipped_and_the_next_request_answered(served, broken):
    served.send(broken)
    assert "**Net**" in hovered(hover_again(served, iter(range(random.randint(10**7, 10**8), 10**9))))
    assert served.proc.poll() is None


def test_a_hover_at_a_negative_position_gets_an_invalid_params_error(served):
    msg_id = random.randint(10**7, 10**8)
    served.request(
        msg_id,
        "textDocument/hover",
        {"textDocument": {"uri": (served.root / "net.py").as_uri()}, "position": {"line": -1, "character": 0}},
    )
    assert served.reply(msg_id)["error"]["code"] == -32602
    assert "**Net**" in hovered(served.hover(msg_id + 1))


def test_after_shutdown_requests_are_refused_and_exit_ends_the_server(raw):
    raw.initialize()
    raw.request(2, "shutdown")
    assert raw.reply(2)["result"] is None
    raw.request(3, "initialize", {"capabilities": {}})
    assert raw.reply(3)["error"]["code"] == -32600
    raw.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert raw.proc.wait(60) == 0  # it ends its warm worker first


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_messages = st.fixed_dictionaries(
    {
        "jsonrpc": st.sampled_from(["2.0", "1.0"]),
        "method": st.sampled_from(
            [
                "textDocument/hover",
                "initialize",
                "exportlens/status",
                "$/x",
                "textDocument/didOpen",
                "workspace/didChangeConfiguration",
            ]
        ),
    },
    optional={"id": st.integers(100, 10**6) | st.text(max_size=4), "params": _json},
)
_frames = st.one_of(
    _messages.map(frame),
    st.tuples(_messages, st.integers(-3, 400)).map(lambda m: frame(m[0], length=m[1])),
    st.binary(max_size=64),
    st.builds(lambda v: b"Content-Length: " + v + b"\r\n\r\n", st.binary(max_size=12)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.lists(_frames, min_size=1, max_size=12))
def test_after_random_frames_headers_and_json_a_hover_is_answered_correctly(served, garbage):
    for chunk in garbage:
        served.send(chunk)
    served.send(b"\r\n\r\n")  # ends a header the garbage may have left open
    reply = hover_again(served, iter(range(random.randint(10**7, 10**8), 10**9)))
    assert "**Net**" in hovered(reply), reply
    assert served.proc.poll() is None


def status_answered(raw: Raw, msg_id: int, timeout: float = 10) -> dict:
    raw.request(msg_id, "exportlens/status", {})
    return raw.reply(msg_id, timeout)["result"]


@pytest.mark.parametrize(
    "message, code",
    [
        ({}, None),
        ({"id": 7}, -32600),
        ({"id": 7, "method": "exportlens/status"}, -32600),  # no "jsonrpc"
        ({"jsonrpc": "2.0", "id": [7], "result": 1}, None),  # a response to no request the server can have sent
        ({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": []}}, None),
        ({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {}}}, None),
        ({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1, "a"]}}, None),
    ],
)
@pytest.mark.slow
def test_a_message_of_the_wrong_shape_is_answered_or_dropped_and_the_server_stays(raw, message, code):
    raw.initialize()
    raw.send(frame(message))
    assert status_answered(raw, 8)["files_indexed"] == 1
    if code is not None:
        assert raw.reply(7)["error"]["code"] == code
    assert raw.proc.poll() is None


DEEP = "".join(
    ['{"jsonrpc": "2.0", "id": 7, "method": "exportlens/status", "params": ', '{"a": ' * 50_000, "1", "}" * 50_000, "}"]
)


@pytest.mark.parametrize(
    "broken",
    [
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}",  # Python refuses to read a number that long
        framed(b"[" * 200_000 + b"]" * 200_000),  # json recurses once per bracket
        framed(DEEP.encode()),
    ],
    ids=["length-of-5000-digits", "200k-nested-brackets", "params-50k-objects-deep"],
)
@pytest.mark.slow
def test_a_frame_too_long_or_too_deep_is_refused_and_the_server_reads_on(raw, broken):
    raw.initialize()
    raw.send(broken)
    assert status_answered(raw, 8)["files_indexed"] == 1
    if b'"id": 7' in broken:
        error = raw.reply(7)["error"]
        assert error["code"] == -32600 and "deeper than 128 levels" in error["message"]


def gone(pid: int, timeout: float) -> bool:
    """Exited (a zombie not yet reaped is gone too), asked of psutil: every system's answer
    (`os.kill(pid, 0)` on Windows sends a console event instead of asking)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_the_end_of_the_input_ends_the_server_and_its_warm_worker_even_after_a_broken_frame(raw):
    raw.initialize(exportOn="save")  # trusted: the warm worker starts at once
    deadline = time.monotonic() + 120  # it imports torch: seconds, more on a loaded machine
    while not (worker := status_answered(raw, 10 + int(time.monotonic()))["worker_pid"]):
        assert time.monotonic() < deadline, "the warm worker never started"
        time.sleep(0.2)
    raw.send(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n")  # once, the reader died here and the server ignored EOF
    raw.proc.stdin.close()
    assert raw.proc.wait(30) == 1  # ended without shutdown: exit code 1
    assert gone(worker, 60), f"the warm worker {worker} outlived the server"


LONG = "a" * 5000 + ".py"  # a name no file system allows: every call on it raises OSError


@pytest.mark.parametrize(
    "method, params, result",
    [
        (
            "textDocument/hover",
            {"textDocument": {"uri": f"file:///{LONG}"}, "position": {"line": 0, "character": 0}},
            None,
        ),
        (
            "textDocument/inlayHint",
            {
                "textDocument": {"uri": f"file:///{LONG}"},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
            },
            [],
        ),
        ("exportlens/program", {"uri": f"file:///{LONG}", "line": 3}, None),
        (
            "workspace/executeCommand",
            {"command": "exportlens.exportModule", "arguments": [{"uri": f"file:///{LONG}", "line": 3}]},
            None,
        ),
        ("workspace/executeCommand", {"command": "exportlens.exportModule"}, None),
        ("workspace/executeCommand", {"command": "exportlens.exportModule", "arguments": None}, None),
        ("workspace/executeCommand", {"command": "exportlens.createSpec", "arguments": None}, False),
    ],
    ids=[
        "hover-long-uri",
        "inlay-long-uri",
        "program-long-uri",
        "export-long-uri",
        "command-no-arguments",
        "command-null-arguments",
        "spec-null-arguments",
    ],
)
def test_a_request_naming_no_file_or_nothing_is_answered_without_a_python_frame(served, method, params, result):
    msg_id = random.randint(10**7, 10**8)
    before = len(served.received)
    served.request(msg_id, method, params)
    assert served.reply(msg_id) == {"jsonrpc": "2.0", "id": msg_id, "result": result}
    assert [python_frames(m) for m in served.received[before:] if python_frames(m)] == []


@pytest.mark.slow  # a server of its own; no frame in a handler's error: the pygls test below, the served ones above
def test_a_workspace_check_that_fails_inside_answers_without_a_python_frame(raw):
    """A key duplicated in pyproject.toml while the server runs once raised out of the spec
    reader, and the error's data carried the traceback."""
    raw.initialize()
    assert status_answered(raw, 2)["files_indexed"] == 1
    (raw.root / "pyproject.toml").write_text(PYPROJECT + 'inputs = { x = "f32[8]" }\n')
    raw.request(3, "exportlens/checkWorkspace", {})
    reply = raw.reply(3)
    assert "result" in reply or reply["error"]["code"] == -32603
    assert [python_frames(m) for m in raw.received if python_frames(m)] == []


def test_documented_requests_answer_with_their_params_left_out_or_null(tmp_path):
    raw = Raw(tmp_path)  # no module has a spec here: the check exports nothing
    try:
        raw.initialize()
        raw.request(2, "exportlens/checkWorkspace")  # as docs/server.md shows it: no params
        assert raw.reply(2)["result"] == {"modules": 0, "exported": 0, "failed": 0, "findings": 0}
        for msg_id, method in enumerate(
            ["exportlens/checkWorkspace", "exportlens/status", "exportlens/program"], start=3
        ):
            raw.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": None}))
            assert "result" in raw.reply(msg_id)
        raw.request(6, "exportlens/program")
        assert raw.reply(6)["result"] is None  # names no module: nothing to show
    finally:
        raw.stop()


def test_initialize_counts_once_it_succeeds_and_only_once(raw):
    raw.request(1, "initialize", {"capabilities": 5})
    assert raw.reply(1)["error"]["code"] == -32602
    raw.request(2, "exportlens/status", {})
    assert raw.reply(2)["error"]["code"] == -32002  # the refused initialize opened nothing
    raw.send(
        frame({"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": {}}})
    )  # a notification: dropped
    raw.request(3, "exportlens/status", {})
    assert raw.reply(3)["error"]["code"] == -32002
    raw.request(4, "initialize", {"capabilities": {}, "rootUri": raw.root.as_uri()})
    assert "capabilities" in raw.reply(4)["result"]
    raw.request(5, "initialize", {"capabilities": {}, "rootUri": raw.root.as_uri()})
    error = raw.reply(5)["error"]
    assert error["code"] == -32600 and "once" in error["message"]
    assert status_answered(raw, 6)["pid"] == raw.proc.pid


def test_what_pygls_makes_of_an_exception_reaches_the_client_without_its_frames():
    """pygls answers an exception in a handler with its frames in error.data.traceback and
    reports a notification's in a message: none of that gets past the writer."""
    out = io.BytesIO()
    server = build()
    server.protocol.set_writer(Outgoing(out))
    try:
        compile("def broken(:\n", "models/net.py", "exec")
    except SyntaxError as e:
        error = JsonRpcInternalError.of(sys.exc_info())
        text = "".join(traceback.format_exception(e))
    server.protocol._send_response(7, error=error.to_response_error())  # what a failing request handler gets
    server.report_server_error(error, FeatureNotificationError)  # what a failing notification handler gets
    server.window_log_message(types.LogMessageParams(types.MessageType.Log, f"exportlens: {text}"))
    sent = []
    for part in out.getvalue().split(b"Content-Length: ")[1:]:
        sent.append(json.loads(part.partition(b"\r\n\r\n")[2]))
    assert [m.get("method") for m in sent] == [None, "window/showMessage", "window/logMessage"]
    assert [python_frames(m) for m in sent if python_frames(m)] == []
    assert sent[0]["error"] == {"code": -32603, "message": "SyntaxError: invalid syntax"}
    assert sent[2]["params"]["message"] == "exportlens: SyntaxError: invalid syntax\n"
