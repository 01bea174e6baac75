"""``exportlens serve`` on raw pipes, for the tests that break the protocol: pytest-lsp only
sends well-formed frames. Every frame the server writes is kept, parsed, in ``received``."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NET = "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
PYPROJECT = '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[4]" }\n'

# what a Python traceback leaves in text, and the member pygls puts its frames in
FRAME_MARKS = ("Traceback", 'File "', '.py", line')


def frame(message: object, length: int | None = None) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def framed(body: bytes) -> bytes:
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


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
        self.received: list[Any] = []  # every message the server wrote, in order

    @classmethod
    def on_net(cls, root: Path) -> Raw:
        """A server in ``root``, which holds ``net.py`` and a pyproject.toml with its spec."""
        (root / "net.py").write_text(NET)
        (root / "pyproject.toml").write_text(PYPROJECT)
        return cls(root)

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: int | str, method: str, params: object = None) -> None:
        self.send(
            frame(
                {"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})}
            )
        )

    def notify(self, method: str, params: object) -> None:
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def reply(self, msg_id: int | str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.received:
                if (
                    isinstance(message, dict)
                    and message.get("id") == msg_id
                    and ("result" in message or "error" in message)
                ):
                    return message
            if time.monotonic() > deadline or not self.read(0.1):
                raise AssertionError(f"no reply to {msg_id}")

    def read(self, timeout: float) -> bool:
        """Take in what the server wrote within ``timeout`` seconds; False at its end of output."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if ready:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return False
            self._out += chunk
            self._parse()
        return True

    def _parse(self) -> None:
        while b"\r\n\r\n" in self._out:
            header, _, rest = self._out.partition(b"\r\n\r\n")
            size = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if len(rest) < size:
                return
            self.received.append(json.loads(rest[:size]))
            self._out = rest[size:]

    def initialize(self, **options: Any) -> None:
        options = {"exportOn": "manual", **options}
        self.request(
            1, "initialize", {"capabilities": {}, "rootUri": self.root.as_uri(), "initializationOptions": options}
        )
        assert "result" in self.reply(1)
        self.notify("initialized", {})
        self.open()

    def open(self) -> None:
        """Open net.py as an editor does: indexed at once, the hover has its module."""
        item = {"uri": (self.root / "net.py").as_uri(), "languageId": "python", "version": 1, "text": NET}
        self.notify("textDocument/didOpen", {"textDocument": item})

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


def python_frames(message: Any) -> list[str]:
    """Where ``message`` holds a piece of a Python traceback: a ``traceback`` member, or a
    string with one of ``FRAME_MARKS``."""
    found = []
    stack = [message]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found += ["a 'traceback' member"] if "traceback" in value else []
            stack += value.values()
        elif isinstance(value, list):
            stack += value
        elif isinstance(value, str) and any(mark in value for mark in FRAME_MARKS):
            found.append(value)
    return found
