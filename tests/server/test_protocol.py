"""The server over raw stdio, as a broken or hostile client drives it: every request it can
parse is answered with the right code, broken frames are skipped, and a hover still gets
its answer afterwards. No pytest-lsp here: it only sends well-formed frames."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NET = "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
PYPROJECT = '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[4]" }\n'


def frame(message: object, length: int | None = None) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


class Raw:
    """``exportlens serve`` on pipes; replies parsed from whatever comes back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = tempfile.TemporaryFile()  # a file, not a pipe nobody reads: a full stderr would block the server
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "exportlens.cli", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=root,
        )
        self._out = b""

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: object = None) -> None:
        self.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})}))

    def reply(self, msg_id: int, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self._messages():
                if message.get("id") == msg_id and ("result" in message or "error" in message):
                    return message
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                self._out += chunk
        raise AssertionError(f"no reply to {msg_id}")

    def _messages(self) -> list[dict]:
        out, found = self._out, []
        while b"\r\n\r\n" in out:
            header, _, rest = out.partition(b"\r\n\r\n")
            size = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if len(rest) < size:
                break
            found.append(json.loads(rest[:size]))
            out = rest[size:]
        return found

    def initialize(self) -> None:
        self.request(1, "initialize", {"capabilities": {}, "rootUri": self.root.as_uri(), "initializationOptions": {"exportOn": "manual"}})
        assert "result" in self.reply(1)
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        self.open()

    def open(self) -> None:
        """Open net.py as an editor does: indexed at once, the hover has its module."""
        item = {"uri": (self.root / "net.py").as_uri(), "languageId": "python", "version": 1, "text": NET}
        self.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}))

    def hover(self, msg_id: int, timeout: float = 30) -> dict:
        """Hover on the class name of net.py: a correct answer says it is not exported yet."""
        self.request(
            msg_id,
            "textDocument/hover",
            {"textDocument": {"uri": (self.root / "net.py").as_uri()}, "position": {"line": 3, "character": 7}},
        )
        return self.reply(msg_id, timeout)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")


@pytest.fixture
def raw(tmp_path: Path):
    (tmp_path / "net.py").write_text(NET)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    server = Raw(tmp_path)
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
    raw.request(3, "initialize", {"capabilities": {}, "rootUri": raw.root.as_uri(), "initializationOptions": {"exportOn": "manual"}})
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
        frame({"jsonrpc": "2.0", "id": 50, "method": "shutdown"}, length=400),  # too long: swallows the next frame's start
        b"Content-Length: 2\r\n\r\n[]",
    ],
)
def test_a_broken_frame_is_skipped_and_the_next_request_answered(served, broken):
    served.send(broken)
    assert "**Net**" in hovered(hover_again(served, iter(range(random.randint(10**7, 10**8), 10**9))))
    assert served.proc.poll() is None


def test_a_hover_at_a_negative_position_gets_an_invalid_params_error(raw):
    raw.initialize()
    raw.request(
        2, "textDocument/hover", {"textDocument": {"uri": (raw.root / "net.py").as_uri()}, "position": {"line": -1, "character": 0}}
    )
    assert raw.reply(2)["error"]["code"] == -32602
    assert "**Net**" in hovered(raw.hover(3))


def test_after_shutdown_requests_are_refused_and_exit_ends_the_server(raw):
    raw.initialize()
    raw.request(2, "shutdown")
    assert raw.reply(2)["result"] is None
    raw.request(3, "initialize", {"capabilities": {}})
    assert raw.reply(3)["error"]["code"] == -32600
    raw.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert raw.proc.wait(10) == 0


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_messages = st.fixed_dictionaries(
    {
        "jsonrpc": st.sampled_from(["2.0", "1.0"]),
        "method": st.sampled_from(
            ["textDocument/hover", "initialize", "exportlens/status", "$/x", "textDocument/didOpen", "workspace/didChangeConfiguration"]
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
