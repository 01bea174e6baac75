"""What the server writes to the client: every message passes ``Outgoing.write``, the one
place where no Python frame gets through.

pygls 2.1.1 answers an exception in a handler with its traceback's frames in
``error.data.traceback`` (``JsonRpcInternalError.of``), and a message built from an
exception may quote one (a SyntaxError's text starts with ``File "...", line 1``). Each
frame written is searched for the marks of a Python frame (one regular expression over
its bytes); where one is found, the message is read, its ``traceback`` members are
removed and the traceback lines of its strings are cut, and what was cut goes to the
server's log (stderr) instead. Every pass over a message is linear in its length: a module's
exception text reaches this writer, and no text may freeze the server.

Served over stdio, the frames then go to an ``outbox.Outbox``, whose thread writes them: the
cut is made before a frame is queued, so nothing queued holds a Python frame.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .outbox import Latest, Outbox

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
# as they look in JSON (a quote inside a string escaped); found by substring search, which is
# much faster than a regular expression on a large frame
_MARKS = (b"Traceback (most recent call last)", b'"traceback"', b'\\", line ')
# linear: a fixed text, then blanks (and the first frame's indent)
_TRACEBACK_HEADER = re.compile(r"Traceback \(most recent call last\):\s*")
_LOCATION, _AT_LINE, _INDENT = 'File "', '", line ', " \t"
EXIT_WAIT = 10.0  # seconds the end of the process waits for a client that does not read


class Outgoing(StdoutWriter):
    """The stdout writer: LSP frames, with no Python frame in them; written at once, or
    queued in ``outbox`` for its thread to write."""

    def __init__(self, stdout: Any, outbox: Outbox | None = None) -> None:
        super().__init__(stdout)
        self.outbox = outbox
        self.listener: Callable[[dict[str, Any]], None] | None = None  # shown each message while set
        self._latest = threading.local()  # the key of what the calling thread writes, while stated()

    def write(self, data: bytes) -> None:
        if _marked(data) or self.listener is not None:
            data = self._read(data)
        if self.outbox is None:
            super().write(data)
        else:
            self.outbox.put(data, getattr(self._latest, "key", None))

    @contextmanager
    def stated(self, latest: Latest) -> Iterator[None]:
        """What this thread writes meanwhile says only the latest state of ``latest``: a
        newer frame of it drops one still queued."""
        self._latest.key = latest
        try:
            yield
        finally:
            self._latest.key = None

    def drain(self, timeout: float = EXIT_WAIT) -> None:
        """Every frame queued written, waiting at most ``timeout`` seconds: before the process ends."""
        if self.outbox is not None:
            self.outbox.drain(timeout)

    def close(self) -> None:
        """pygls's ``exit``: what is queued is written first (a reply is never lost at exit)."""
        if self.outbox is not None:
            self.outbox.close(EXIT_WAIT)
        else:
            super().close()

    def message(self, message: dict[str, Any]) -> None:
        """Write one message (a dict of JSON values) as a frame."""
        body = json.dumps(message).encode()
        self.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def _read(self, frame: bytes) -> bytes:
        header, _, body = frame.partition(_HEADER_END)
        try:
            message = json.loads(body)
        except ValueError:
            return frame
        if not isinstance(message, dict):
            return frame
        if self.listener is not None:
            self.listener(message)
        if not _marked(body):
            return frame
        cut: list[str] = []
        message = _scrubbed(message, cut)
        if isinstance(message.get("error"), dict) and message["error"].get("data") == {}:
            del message["error"]["data"]  # it held only the traceback
        body = json.dumps(message).encode()
        if cut:
            log.error("Python frames kept from the client:\n%s", "\n".join(cut))
        return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def stated(server: LanguageServer, latest: Latest) -> AbstractContextManager[None]:
    """``Outgoing.stated`` on ``server``'s writer, or nothing where the writer is another."""
    writer = server.protocol.writer
    return writer.stated(latest) if isinstance(writer, Outgoing) else nullcontext()


def _marked(data: bytes) -> bool:
    return any(mark in data for mark in _MARKS)


def without_frames(text: str) -> str:
    """``text`` with the lines of any Python traceback in it cut: its header, and each
    frame's location (``File "…", line N`` where a line starts, its indent too, or inside a
    line: a message that quotes an exception's text) to the end of its line, with the source
    and caret lines indented four blanks or more below it. The exception's own line stays."""
    text = _TRACEBACK_HEADER.sub("", text)
    kept, at, start = [], 0, 0
    while (i := text.find(_LOCATION, start)) >= 0:
        begins, ends = text.rfind("\n", 0, i) + 1, _line_end(text, i)
        start = ends
        if not _located(text, i + len(_LOCATION), ends):
            continue  # nor has a later location on this line
        if not text[begins:i].strip(_INDENT):
            i = begins  # the frame's indent goes with it
        end = min(ends + 1, len(text))
        while len(text[end : end + 4]) == 4 and not text[end : end + 4].strip(_INDENT):
            end = min(_line_end(text, end) + 1, len(text))  # the source and caret lines below it
        kept.append(text[at:i])
        at = start = end
    return "".join(kept) + text[at:] if kept else text


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _located(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds the end of a frame's location, ``", line `` and a
    digit. One pass: a regular expression tried from each ``File "`` is quadratic on a line
    that holds many."""
    while (j := text.find(_AT_LINE, start, end)) >= 0:
        if text[j + len(_AT_LINE) : j + len(_AT_LINE) + 1].isdecimal():
            return True
        start = j + 1
    return False


def _scrubbed(value: Any, cut: list[str]) -> Any:
    if isinstance(value, str):
        clean = without_frames(value)
        if clean != value:
            cut.append(value)
        return clean
    if isinstance(value, list):
        return [_scrubbed(v, cut) for v in value]
    if isinstance(value, dict):
        if "traceback" in value:
            cut.append(_text(value["traceback"]))
        return {k: _scrubbed(v, cut) for k, v in value.items() if k != "traceback"}
    return value


def _text(traceback: Any) -> str:
    return (
        "".join(traceback)
        if isinstance(traceback, list) and all(isinstance(t, str) for t in traceback)
        else repr(traceback)
    )
