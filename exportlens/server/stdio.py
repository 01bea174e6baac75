"""The stdio transport: LSP over stdin and stdout, so that no input stops the server from
answering, and the end of the input always ends it.

It replaces pygls 2.1.1's reader (``pygls.io_.run_async``), which reads exactly
``Content-Length`` bytes and trusts them: a length longer than its body waits forever, a
giant one is allocated (MemoryError), a broken frame is never resynchronized, requests
sent before ``initialize`` are handled, and a request whose params do not validate gets
no response at all. pygls also trusts the message's shape: an object without
``"jsonrpc"``, a response whose id is an array or a ``$/cancelRequest`` for the id
``[]`` raises out of its loop, which ends the server.

Here ``frames.Frames`` reads bounded frames, each message is checked against JSON-RPC
and the LSP lifecycle before pygls sees it (a request that fails gets an error, a
notification is dropped, both logged to stderr), an exception anywhere in handling one
message is that message's error, and ``outgoing.Outgoing`` writes what goes out, through an
``outbox.Outbox`` whose thread waits for the client in the event loop's place.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, NoReturn

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from . import compat, keystrokes
from .frames import END, MAX_DEPTH, Frames, TooDeep
from .outbox import Outbox
from .outgoing import Outgoing

log = logging.getLogger(__name__)

# JSON-RPC and LSP error codes
SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603


class Gate:
    """The LSP lifecycle: until ``initialize`` has been answered with a result, only it
    (and ``exit``); ``initialize`` once; after ``shutdown``, only ``exit``. What it refuses
    gets an error where it is a request, and is dropped where it is a notification."""

    def __init__(self, writer: Outgoing) -> None:
        self.writer = writer
        self.initializing: int | str | None = None  # the id of the initialize not yet answered
        self.initialized = False
        self.shut_down = False

    @property
    def exit_code(self) -> int:
        """0 after ``shutdown``, 1 otherwise, as the protocol says of ``exit``."""
        return 0 if self.shut_down else 1

    def refusal(self, method: str, msg_id: int | str | None) -> tuple[int, str] | None:
        """Why ``method`` may not be handled now (``msg_id`` None: a notification); None if it may."""
        if method == types.EXIT:
            return None
        if method in (types.INITIALIZE, types.SHUTDOWN) and msg_id is None:
            return INVALID_REQUEST, f"{method} is a request: a notification of it is dropped"
        if self.shut_down:
            return INVALID_REQUEST, f"{method}: the server is shutting down"
        if method == types.INITIALIZE:
            if self.initialized or self.initializing is not None:
                return INVALID_REQUEST, "initialize: the server is initialized already (initialize is sent once)"
            self.initializing = msg_id
            self.writer.listener = self._sent  # initialized once its answer is a result
            return None
        if not self.initialized:
            return SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized (send initialize first)"
        if method == types.SHUTDOWN:
            self.shut_down = True
        return None

    def _sent(self, message: dict[str, Any]) -> None:
        if "method" in message or message.get("id") != self.initializing:
            return
        self.initialized = "result" in message  # an error leaves the client free to try again
        self.initializing = None
        self.writer.listener = None


def serve(server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> NoReturn:
    """Serve LSP over stdio until ``exit`` or the end of the input, then end the process."""
    server._stop_event = threading.Event()  # pygls's shutdown() sets it
    out = stdout or sys.stdout.buffer
    writer = Outgoing(out, Outbox(out))
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
    _end(server, writer, 1)


async def _loop(server: LanguageServer, frames: Frames, writer: Outgoing) -> NoReturn:
    """Handle messages until ``exit`` or the end of the input, then end the process."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(_started_executor())
    messages: asyncio.Queue[Any] = asyncio.Queue()

    def read() -> None:  # a daemon thread: blocked on stdin, it must not hold up the exit
        try:
            while (message := frames.message()) is not END:
                loop.call_soon_threadsafe(messages.put_nowait, message)
        except Exception:
            log.exception("reading the input failed: the server ends as at its end")
        finally:
            loop.call_soon_threadsafe(messages.put_nowait, END)

    def closed() -> None:  # the client closed its end of stdout: the server ends as at the end of its input
        try:
            loop.call_soon_threadsafe(messages.put_nowait, END)
        except RuntimeError:  # the loop is gone: the process is ending anyway
            pass

    if writer.outbox is not None:
        writer.outbox.on_broken = closed
    threading.Thread(target=read, name="exportlens-stdin", daemon=True).start()
    gate = Gate(writer)
    while True:
        waiting = [await messages.get()]
        while not messages.empty():  # what queued up while the loop was busy: keystrokes fold (keystrokes.py)
            waiting.append(messages.get_nowait())
        for message in keystrokes.folded(waiting):
            if message is END:
                log.warning("the input ended: the server ends")
                _end(server, writer, gate.exit_code)
            if _handle(server, gate, writer, message):
                _end(server, writer, gate.exit_code)


def _started_executor() -> ThreadPoolExecutor:
    """The loop's executor (``asyncio.to_thread``: plans, proofs' plans, rescans) with its
    threads started now: one started when work is handed to it holds the event loop until
    the thread is up. As many as asyncio's default would start."""
    threads = min(32, (os.cpu_count() or 1) + 4)
    executor = ThreadPoolExecutor(threads, thread_name_prefix="exportlens-off-loop")
    started = threading.Barrier(threads)
    for _ in range(threads):  # each waits for the others: no thread is idle, so each submit starts one
        executor.submit(started.wait)
    return executor


def _end(server: LanguageServer, writer: Outgoing, code: int) -> NoReturn:
    """End the process, the server's workers and indexers first (its ``shutdown()``), then
    every message queued to the client written (a bounded wait), from the event loop:
    ``os._exit``, so that no thread left waiting (an executor's, a pipe's) keeps it alive."""
    try:
        server.shutdown()
    except Exception:
        log.exception("the server's teardown failed")
    writer.drain()
    sys.stderr.flush()
    os._exit(code)


def _handle(server: LanguageServer, gate: Gate, writer: Outgoing, raw: Any) -> bool:
    """Check one message and hand it to pygls; True when it was ``exit``."""
    if isinstance(raw, TooDeep):
        top = raw.top or {}
        if "method" in top:
            _error(writer, top.get("id"), INVALID_REQUEST, f"the message nests deeper than {MAX_DEPTH} levels")
        return False
    problem = _malformed(raw)
    if problem is not None:
        log.warning("dropped a message: %s", problem)
        if isinstance(raw, dict) and "result" not in raw and "error" not in raw:  # a response is never answered
            _error(writer, raw.get("id"), INVALID_REQUEST, problem)
        return False
    method, msg_id = raw.get("method"), raw.get("id")
    if method is not None:
        refusal = gate.refusal(method, msg_id)
        if refusal is not None:
            _error(writer, msg_id, *refusal)
            return False
        compat.give_params(server, raw)
    try:
        message = server.protocol.structure_message(raw)
    except JsonRpcException as e:  # params that do not validate: -32602
        _error(writer, msg_id if method else None, e.code, f"{method}: {e.message}")
        return False
    if method == types.EXIT:
        try:
            server.protocol.handle_message(message)  # pygls closes the output and raises SystemExit
        except SystemExit:
            pass
        return True
    try:
        server.protocol.handle_message(message)
    except Exception as e:
        log.exception("handling %s failed", method or "a response")
        _error(
            writer, msg_id if method else None, INTERNAL_ERROR, f"{method}: internal error ({type(e).__name__}: {e})"
        )
    return False


def _malformed(raw: Any) -> str | None:
    """What makes ``raw`` no JSON-RPC 2.0 request, notification or response; None if nothing."""
    if not isinstance(raw, dict):
        return "a frame that is not a JSON object"
    if raw.get("jsonrpc") != "2.0":
        return 'not JSON-RPC 2.0 (no "jsonrpc": "2.0")'
    if "id" in raw and not _is_id(raw["id"]):
        return f"the id {_short(raw['id'])} is not a number or a string"
    if "method" in raw:
        if not isinstance(raw["method"], str):
            return f"the method {_short(raw['method'])} is not a string"
        if not isinstance(raw.get("params"), (dict, list, type(None))):
            return f"{raw['method']}: params must be an object or an array"
        if raw["method"] == types.CANCEL_REQUEST and not _is_id(compat.field_of(raw.get("params"), "id")):
            return f"{types.CANCEL_REQUEST} names no request id"
        return None
    if "id" not in raw or ("result" in raw) == ("error" in raw):
        return "neither a request, a notification nor a response"
    error = raw.get("error")
    if "error" in raw and not (
        isinstance(error, dict) and _is_int(error.get("code")) and isinstance(error.get("message"), str)
    ):
        return f"a response to {raw['id']!r} whose error has no code and message"
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_id(value: Any) -> bool:
    return _is_int(value) or isinstance(value, str)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _error(writer: Outgoing, msg_id: Any, code: int, message: str) -> None:
    """Answer request ``msg_id`` with an error; nothing where there is no id the client can match."""
    if not _is_id(msg_id):
        return
    log.warning("answered %s with error %d: %s", msg_id, code, message)
    writer.message({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
