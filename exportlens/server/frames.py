"""LSP frames read from a byte stream, bounded: what is not a frame is logged and skipped,
and no frame, however built, can stop the reader.

A ``Content-Length`` is read only when it is a number of at most ``MAX_FRAME`` bytes (a
length of 5,000 digits is not converted at all: Python refuses more than 4,300), and a
message is handed on only when its arrays and objects nest at most ``MAX_DEPTH`` deep:
Python's ``json`` recurses once per level and raises RecursionError past about a
thousand, and whatever walks the message after it (cattrs, ``repr``, ``json.dumps``)
would do the same further on.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_FRAME = 64 << 20  # bytes: no LSP message is near this; a larger length is a broken frame
MAX_DEPTH = 128  # levels of arrays and objects: LSP's own messages nest under 10
_JUNK_KEPT = 1 << 16  # bytes kept while looking for a header in junk
_HEADER_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)  # linear: nothing follows its runs
_TOP_SCANNED = 1 << 20  # bytes: a frame too deep to parse is searched for its id up to this size
# what gives JSON its depth: brackets outside strings (a string is matched whole, escapes and all;
# one never closed runs to the end: were its quote required, each quote after it would be tried
# to the end again, quadratic in a megabyte of escaped quotes)
_STRUCTURE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]+|[\]}]+', re.DOTALL)

END = object()  # the end of the input (JSON's null is a message, if a useless one)


@dataclass(frozen=True)
class TooDeep:
    """A frame nested deeper than ``MAX_DEPTH``, not handed on: only its top-level scalars
    (``id``, ``method``), so that a request can be answered."""

    top: dict[str, Any] | None  # None where they could not be read


class Frames:
    """A byte stream split into message bodies; what is not a frame is logged and skipped."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read  # the next bytes; b"" at the end of the stream
        self._buf = bytearray()

    def message(self) -> Any:
        """The next frame's body as JSON, or TooDeep; END at the end. A body that is not
        JSON is skipped."""
        while True:
            body = self.next()
            if body is None:
                return END
            try:
                message = json.loads(body)
            except RecursionError:  # nested past Python's recursion limit: read for its id alone
                return _refused(body, _top_level(body))
            except ValueError:
                log.warning("dropped a frame that is not JSON (%d bytes)", len(body))
                self.resync(body)
                continue
            # a body with fewer brackets than MAX_DEPTH cannot nest deeper: two counts, no walk
            if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _deeper(message, MAX_DEPTH):
                top = (
                    {k: v for k, v in message.items() if not isinstance(v, (dict, list))}
                    if isinstance(message, dict)
                    else None
                )
                return _refused(body, top)
            return message

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
        """``body`` did not parse: its length was wrong. If a header is inside it, read on
        from there (where the body starts with one, its own header is what was skipped)."""
        at = body.find(b"Content-Length:")
        if at >= 0:
            self._buf[:0] = body[at:]

    def _size(self, raw: bytes) -> int | None:
        # checked by its digits before int(): Python refuses to convert more than 4,300 of them
        if not raw.isdigit() or len(raw) > len(str(MAX_FRAME)) or int(raw) > MAX_FRAME:
            log.warning(
                "dropped a frame whose Content-Length is %r: skipped to the next header", raw.decode("latin-1")[:40]
            )
            return None
        return int(raw)

    def _fill(self) -> bool:
        try:
            data = self._read()
        except OSError as e:  # the input is gone (a closed descriptor, an I/O error): as its end
            log.error("cannot read the input: %s", e)
            return False
        if not data:
            return False
        self._buf += data
        if len(self._buf) > MAX_FRAME + _JUNK_KEPT and self._buf.find(_HEADER_END) < 0:
            del self._buf[:-_JUNK_KEPT]  # junk without a header end: keep only its tail
        return True


def _refused(body: bytes, top: dict[str, Any] | None) -> TooDeep:
    log.warning("refused a frame nested deeper than %d levels (%d bytes)", MAX_DEPTH, len(body))
    return TooDeep(top)


def _deeper(message: Any, limit: int) -> bool:
    """Whether ``message``'s arrays and objects nest deeper than ``limit``: a depth-first walk
    of its containers alone (a document's text is one string), holding one iterator a level."""
    if not isinstance(message, (dict, list)):
        return False
    path = [iter(_values(message))]
    while path:
        for value in path[-1]:
            if isinstance(value, (dict, list)):
                if len(path) == limit:
                    return True
                path.append(iter(_values(value)))
                break
        else:
            path.pop()
    return False


def _values(container: dict[str, Any] | list[Any]) -> Any:
    return container.values() if isinstance(container, dict) else container


def _top_level(body: bytes) -> dict[str, Any] | None:
    """A message's top level with each nested value read as null (None where that is no
    JSON object, or the body is over ``_TOP_SCANNED``): the ``id`` and ``method`` of a
    frame too deep for ``json`` to parse."""
    if len(body) > _TOP_SCANNED:
        return None
    depth = kept = 0
    top: list[bytes] = []
    for m in _STRUCTURE.finditer(body):
        at, run = m.start(), m.end() - m.start()
        if body[at] == ord('"'):
            continue
        if body[at] in b"[{":
            if depth <= 1 < depth + run:  # the open that enters a top-level value's container
                top += [body[kept : at + 1 - depth], b"null"]
            depth += run
        else:
            if depth - run <= 1 < depth:  # the close that leaves it
                kept = at + depth - 1
            depth -= run
    try:
        message = json.loads(b"".join([*top, body[kept:]]))
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None
