"""Keystrokes that queued up while the server was busy, handled as one ``didChange``.

A fast typist in a long file sends a ``didChange`` per character; while the event loop
is busy (an export landing, a loaded machine) they queue up, and each one handled on its
own costs a structuring by pygls, a cut of the whole text and a round of the handlers,
so that a request sent after them (``exportlens/status``) waits for all of them
(``bench/bench_storm.py`` measures it). Here the raw messages waiting in the input queue are read
together, and a run of ``didChange`` notifications for one document, one right behind
the other, becomes one notification with all their changes in order and the last
version: the text the server ends with is the same, and nothing could have seen the
versions between them (nothing runs between two queued messages). Characters typed one
after another on one line are joined into one insertion. Anything of another shape is
left as it is, for ``stdio._handle`` to check.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

_CHANGE_KEYS = {"range", "text", "rangeLength"}


def folded(messages: list[Any]) -> list[Any]:
    """``messages`` in order, each run of ``didChange`` for one document as one."""
    out: list[Any] = []
    for message in messages:
        joined = _joined(out[-1], message) if out else None
        if joined is None:
            out.append(message)
        else:
            out[-1] = joined
    return out


def _joined(first: Any, second: Any) -> dict[str, Any] | None:
    """One ``didChange`` that does what ``first`` then ``second`` do; None unless both are
    well-formed ``didChange`` notifications of the same document."""
    a, b = _change(first), _change(second)
    if a is None or b is None or a["textDocument"]["uri"] != b["textDocument"]["uri"]:
        return None
    changes = list(a["contentChanges"])
    for change in b["contentChanges"]:
        typed = _typed_after(changes[-1], change) if changes else None
        if typed is None:
            changes.append(change)
        else:
            changes[-1] = typed
    params = {**b, "contentChanges": changes}
    return {**second, "params": params}


def _change(message: Any) -> dict[str, Any] | None:
    """The params of a well-formed ``didChange`` notification; None for anything else."""
    if not isinstance(message, dict) or message.get("method") != types.TEXT_DOCUMENT_DID_CHANGE:
        return None
    if "id" in message or message.get("jsonrpc") != "2.0":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or set(params) != {"textDocument", "contentChanges"}:
        return None
    document, changes = params["textDocument"], params["contentChanges"]
    if not isinstance(document, dict) or set(document) != {"uri", "version"}:
        return None
    if not isinstance(document["uri"], str) or type(document["version"]) is not int:
        return None
    if not isinstance(changes, list) or not all(_well_formed(c) for c in changes):
        return None
    return params


def _well_formed(change: Any) -> bool:
    if not isinstance(change, dict) or not isinstance(change.get("text"), str):
        return False
    if set(change) == {"text"}:
        return True  # the whole text
    if not set(change) <= _CHANGE_KEYS or "range" not in change:
        return False
    r = change["range"]
    return isinstance(r, dict) and set(r) == {"start", "end"} and _position(r["start"]) and _position(r["end"])


def _position(p: Any) -> bool:
    return (
        isinstance(p, dict)
        and set(p) == {"line", "character"}
        and all(type(v) is int and 0 <= v < 2**31 for v in p.values())
    )


def _typed_after(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any] | None:
    """One insertion of both texts where ``second`` inserts right after what ``first``
    inserted, on one line; None otherwise. Only ASCII without line breaks: then a
    character is one code unit in every position encoding."""
    a, b = _insertion(first), _insertion(second)
    if a is None or b is None:
        return None
    (line, column), (next_line, next_column) = a, b
    if next_line != line or next_column != column + len(first["text"]):
        return None
    return {"range": first["range"], "text": first["text"] + second["text"]}


def _insertion(change: dict[str, Any]) -> tuple[int, int] | None:
    """Where ``change`` inserts plain text (an empty range); None for any other change."""
    r, text = change.get("range"), change["text"]
    if r is None or r["start"] != r["end"] or change.get("rangeLength", 0) != 0:
        return None
    if not text.isascii() or not text.isprintable():
        return None  # a line break, or a character of more than one code unit
    return r["start"]["line"], r["start"]["character"]
