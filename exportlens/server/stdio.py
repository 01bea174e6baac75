"""The stdio transport: LSP frames read so that no input stops the server from answering.

It replaces pygls 2.1.1's reader (``pygls.io_.run_async``), which reads exactly
``Content-Length`` bytes and trusts them: a length longer than its body waits forever, a
giant one is allocated (MemoryError), a broken frame is never resynchronized, requests
sent before ``initialize`` are handled, and a request whose params do not validate gets
no response at all. Here, every frame that can be read is answered, a broken one is
logged and skipped up to the next ``Content-Length`` header, and a length above
``MAX_FRAME`` is refused without reading it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from threading import Event
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

MAX_FRAME = 64 << 20  # bytes: no LSP message is near this; a larger length is a broken frame
_JUNK_KEPT = 1 << 16  # bytes kept while looking for a header in junk
_HEADER_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)

END = object()  # the end of the input (JSON's null is a message, if a useless one)

# JSON-RPC and LSP error codes
SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600


class Frames:
    """A byte stream split into message bodies; what is not a frame is logged and skipped."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read  # the next bytes; b"" at the end of the stream
        self._buf = bytearray()

    def message(self) -> Any:
        """The next frame's body as JSON (a body that is not JSON is skipped); END at the end."""
        while True:
            body = self.next()
            if body is None:
                return END
            try:
                return json.loads(body)
            except ValueError:
                log.warning("dropped a frame that is not JSON (%d bytes)", len(body))
                self.resync(body)

    def next(self) -> bytes | None:
        """The next frame's body; None at the end of the stream."""
        while True:
            end = self._buf.find(_HEADER_END)
            if end < 0:
                if not self._fill():
                    return None
                continue
            start = end + len(_HEADER_END)
            lengths = list(_LENGTH.finditer(self._buf, 0, end))
            size = self._size(lengths[-1].group(1).strip()) if lengths else None
            if size is None:
                if not lengths:
                    log.warning("dropped %d bytes that are no LSP frame header", start)
                del self._buf[:start]
                continue
            while len(self._buf) < start + size:
                if not self._fill():
                    return None
            body = bytes(self._buf[start : start + size])
            del self._buf[: start + size]
            return body

    def resync(self, body: bytes) -> None:
        """``body`` did not parse: its length was wrong. If a header follows inside it, read on from there."""
        at = body.find(b"Content-Length:")
        if at > 0:
            self._buf[:0] = body[at:]

    def _size(self, raw: bytes) -> int | None:
        if not raw.isdigit():
            log.warning("dropped a frame whose Content-Length is %r", raw.decode("latin-1")[:40])
            return None
        size = int(raw)
        if size > MAX_FRAME:
            log.warning("refused a frame of %d bytes (the limit is %d): skipped to the next header", size, MAX_FRAME)
            return None
        return size

    def _fill(self) -> bool:
        data = self._read()
        if not data:
            return False
        self._buf += data
        if len(self._buf) > MAX_FRAME + _JUNK_KEPT and self._buf.find(_HEADER_END) < 0:
            del self._buf[:-_JUNK_KEPT]  # junk without a header end: keep only its tail
        return True


class Gate:
    """What the protocol allows at each stage: before ``initialize`` only it (and ``exit``);
    after ``shutdown`` only ``exit``. Everything else that wants an answer gets an error."""

    def __init__(self) -> None:
        self.initialized = False
        self.shut_down = False

    def refusal(self, method: str) -> tuple[int, str] | None:
        if method == "exit":
            return None
        if self.shut_down:
            return INVALID_REQUEST, f"{method}: the server is shutting down"
        if method == "initialize":
            self.initialized = True
            return None
        if not self.initialized:
            return SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized (send initialize first)"
        if method == "shutdown":
            self.shut_down = True
        return None


class ScrubbedWriter(StdoutWriter):
    """pygls 2.1.1 puts a Python traceback in an internal error's ``data``: the client would
    show it. It goes to our log (stderr) instead."""

    def write(self, data: bytes) -> None:
        if b'"error"' in data and b"Traceback" in data:
            data = _scrubbed(data)
        super().write(data)


def _scrubbed(frame: bytes) -> bytes:
    header, _, body = frame.partition(_HEADER_END)
    try:
        message = json.loads(body)
        error = message.get("error") or {}
        log.error("internal error answered to the client: %s", error.pop("data", ""))
    except (ValueError, AttributeError):
        return frame
    body = json.dumps(message, separators=(",", ":")).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def serve(server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve LSP over stdio until ``exit`` or the end of the input."""
    server._stop_event = Event()  # pygls's shutdown() sets it
    writer = ScrubbedWriter(stdout or sys.stdout.buffer)
    server.protocol.set_writer(writer)
    fd = (stdin or sys.stdin.buffer).fileno()
    try:
        # os.read, not the buffered stream: a daemon thread blocked on that holds its lock, and
        # the interpreter aborts at exit when it cannot take it
        asyncio.run(_loop(server, Frames(lambda: os.read(fd, 1 << 16)), writer))
    except BrokenPipeError:
        log.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _loop(server: LanguageServer, frames: Frames, writer: StdoutWriter) -> None:
    loop = asyncio.get_running_loop()
    messages: asyncio.Queue[Any] = asyncio.Queue()

    def read() -> None:  # a daemon thread: blocked on stdin, it must not hold up the exit
        while True:
            message = frames.message()
            loop.call_soon_threadsafe(messages.put_nowait, message)
            if message is END:
                return

    threading.Thread(target=read, name="exportlens-stdin", daemon=True).start()
    gate = Gate()
    while not server._stop_event.is_set():
        message = await messages.get()
        if message is END:
            return
        _handle(server, gate, writer, message)


def _handle(server: LanguageServer, gate: Gate, writer: StdoutWriter, raw: Any) -> None:
    if not isinstance(raw, dict):
        log.warning("dropped a frame that is not a JSON object")
        return
    method = raw.get("method")
    refusal = gate.refusal(method) if isinstance(method, str) else None
    if refusal is not None:
        if "id" in raw:
            _error(writer, raw["id"], *refusal)
        return
    try:
        message = server.protocol.structure_message(raw)
    except JsonRpcException as e:  # params that do not validate: -32602
        if "id" in raw and method:
            _error(writer, raw["id"], e.code, f"{method}: {e.message}")
        return
    if method != "exit":
        server.protocol.handle_message(message)
        return
    try:
        server.protocol.handle_message(message)  # pygls closes the output and raises SystemExit
    except SystemExit:
        pass
    # end here, as the protocol says: a teardown that waits on a thread must not keep the process alive
    sys.stderr.flush()
    os._exit(0 if gate.shut_down else 1)


def _error(writer: StdoutWriter, msg_id: Any, code: int, message: str) -> None:
    if not isinstance(msg_id, (int, str)):
        return  # a response needs an id the client can match
    log.warning("answered %s with error %d: %s", msg_id, code, message)
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}).encode()
    writer.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
