"""Every workaround for pygls's behaviour, in one place: each names the version it was
checked against and why it is needed. The only module of exportlens that touches
pygls's private attributes; when pygls is upgraded, check each one here again."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.workspace.text_document import TextDocument

T = TypeVar("T")


def field_of(params: Any, key: str, default: Any = None) -> Any:
    """A field of a custom request's or notification's params, whatever shape pygls gave them.

    pygls 2.1.1: params of a method lsprotocol does not know arrive as namedtuples (built by
    ``pygls.protocol._dict_to_object``), and results of custom requests likewise; a client
    may also send none at all, or a plain list."""
    if isinstance(params, dict):
        return params.get(key, default)
    return getattr(params, key, default)


async def client_reply(request: Awaitable[T]) -> T:
    """Wait for the client's answer to a server -> client request.

    pygls 2.1.1: cancelling a task that awaits such a request makes the late reply raise
    InvalidStateError inside pygls, which the client shows as "Error in server" popups;
    shielded, the reply lands in a future nobody cancelled."""
    return await asyncio.shield(request)


def cancel_task_with_request(server: LanguageServer) -> None:
    """Let ``$/cancelRequest`` reach the task of the command now running.

    pygls 2.1.1 runs ``workspace/executeCommand`` handlers through a generator and, on
    cancel, cancels only the request's outer future (``protocol._request_futures[msg_id]``),
    never the task doing the work: chain the one to the other."""
    msg_id = server.protocol.msg_id
    request = server.protocol._request_futures.get(msg_id) if msg_id is not None else None
    task = asyncio.current_task()
    if request is not None and task is not None:
        request.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)


def cancel_requests_before_shutdown(server: LanguageServer) -> None:
    """Cancel every request in flight except the ``shutdown`` being handled.

    pygls 2.1.1 does this itself after the shutdown handler, iterating
    ``protocol._request_futures`` while a done-callback of a cancelled future pops from
    it: "dictionary changed size during iteration", and the shutdown fails. Cancelled
    here over a copy, none is left for pygls's loop."""
    current = server.protocol.msg_id
    for msg_id, future in list(server.protocol._request_futures.items()):
        if msg_id != current and not future.done():
            future.cancel()


def on_progress_cancel(server: LanguageServer, token: str, cancelled: Callable[[], object]) -> None:
    """Call ``cancelled`` when the client cancels the work-done progress ``token``.

    pygls 2.1.1 keeps a Future per token in ``work_done_progress.tokens`` and cancels it on
    ``window/workDoneProgress/cancel``; it has no callback API of its own."""
    future = server.work_done_progress.tokens.get(token)
    if future is not None:
        future.add_done_callback(lambda f: cancelled() if f.cancelled() else None)


def forget_progress(server: LanguageServer, token: str) -> None:
    """Drop an ended progress's token.

    pygls 2.1.1 never removes a token from ``work_done_progress.tokens``: without this, one
    Future per export batch would stay there for the server's life."""
    server.work_done_progress.tokens.pop(token, None)


# line breaks other than "\n" that str.splitlines, and so pygls, counts as ends of lines
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


_installed: list[bool] = []  # non-empty once fast_incremental_edits has patched pygls


def fast_incremental_edits() -> None:
    """Apply an incremental change (a keystroke) by cutting the text at its two offsets.

    pygls 2.1.1 (``TextDocument._apply_incremental_change``) splits the whole text into lines
    and writes every line back, in Python: a keystroke costs time in proportion to the file, and
    quick typing in a long file holds the event loop. Here a change's lines are found by
    walking from the line of the document's previous change (typing stays on a line); a text
    with line breaks other than ``\\n`` still goes pygls's way. Installed by ``app.build``."""
    if _installed:
        return
    slow = TextDocument._apply_incremental_change

    def apply(doc: Any, change: types.TextDocumentContentChangePartial) -> None:  # a TextDocument, with our anchor
        if not _cut(doc, change):
            doc._exportlens_anchor = (0, 0)
            slow(doc, change)

    # replacing pygls's method is the point (mypy refuses any assignment to a method)
    TextDocument._apply_incremental_change = apply  # type: ignore[method-assign, assignment]
    _installed.append(True)


def _cut(doc: Any, change: types.TextDocumentContentChangePartial) -> bool:
    source = doc.source
    plain = getattr(doc, "_exportlens_plain", None)
    if plain is None:
        plain = _OTHER_BREAKS.search(source) is None
    doc._exportlens_plain = plain = plain and _OTHER_BREAKS.search(change.text) is None
    if not plain:
        return False
    at = _offset(doc, source, change.range.start)
    if at is None:
        return False
    anchor = doc._exportlens_anchor
    end = _offset(doc, source, change.range.end)
    if end is None or end < at:
        doc._exportlens_anchor = anchor  # the start's line: still where it was, it is before the change
        return False
    doc._source = source[:at] + change.text + source[end:]
    doc._exportlens_anchor = anchor
    return True


def _offset(doc: Any, source: str, position: types.Position) -> int | None:
    """The offset of an LSP position in ``source`` (lines ending in ``\\n`` only); None past its end."""
    line, start = getattr(doc, "_exportlens_anchor", None) or (0, 0)
    while line < position.line:
        newline = source.find("\n", start)
        if newline < 0:
            return None
        line, start = line + 1, newline + 1
    while line > position.line:
        line, start = line - 1, source.rfind("\n", 0, start - 1) + 1
    doc._exportlens_anchor = (line, start)
    newline = source.find("\n", start)
    text = source[start : newline + 1 if newline >= 0 else len(source)]
    if text.isascii():  # a code unit is a character in every encoding: pygls's count, without its loop
        n, character = len(text), position.character
        return start + (0 if n == 0 else character if character <= n else n - 1)
    return (
        start + doc._position_codec.position_from_client_units([text], types.Position(0, position.character)).character
    )


def give_params(server: LanguageServer, message: dict[str, Any]) -> None:
    """Give a request or notification of one of our own methods ``params: null`` where it
    sent none (JSON-RPC lets a client leave them out).

    pygls 2.1.1 reads a method lsprotocol does not know into ``JsonRPCRequestMessage`` or
    ``JsonRPCNotification``, whose ``params`` has no default: without them,
    ``exportlens/checkWorkspace`` failed as an internal error."""
    if "params" not in message and server.protocol.get_message_type(message["method"]) is None:
        message["params"] = None


class _Refusals:
    """pygls 2.1.1 logs every ``JsonRpcException`` a handler raises with its traceback
    (``protocol/json_rpc.py``, ``logger.exception``), though it is the answer we meant: a rename
    refused in words, sent to the client as its error. Such records are dropped; any other
    exception is still logged with its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, JsonRpcException)


def quiet_refusals() -> None:
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_Refusals())
