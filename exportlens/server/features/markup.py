"""Hover and completion documentation in the format the client declared: markdown where it
takes markdown, else plain text (eglot without markdown-mode, for one, shows backticks and
fences as they are written)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from lsprotocol import types

# linear: a fence is tested at a line's start only, and a code span ends at the next backtick
_FENCE = re.compile(r"^\s*```")
_CODE = re.compile(r"(`[^`\n]*`)")
_STAR = re.compile(r"\*")


def content(markdown: str, formats: Sequence[types.MarkupKind] | None) -> types.MarkupContent:
    """``markdown`` as the client's preferred format (the first it declared; none declared: markdown)."""
    if formats and (formats[0] == types.MarkupKind.PlainText or types.MarkupKind.Markdown not in formats):
        return types.MarkupContent(types.MarkupKind.PlainText, plain(markdown))
    return types.MarkupContent(types.MarkupKind.Markdown, markdown)


def plain(markdown: str) -> str:
    """The text a reader of ``markdown`` sees: no fences, backticks or emphasis marks; a code
    block's lines as they are, indented."""
    out, in_code = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            out.append("    " + line)
            continue
        parts = _CODE.split(line)  # odd parts: code spans, whose `*` are the code's own
        out.append("".join(p[1:-1] if i % 2 else unemphasized(p) for i, p in enumerate(parts)))
    return "\n".join(out)


def unemphasized(text: str) -> str:
    """``text`` with each ``**strong**`` and ``*emphasis*`` unwrapped: a mark, then the nearest
    same mark after a non-blank that is not the first character inside (the regular expression
    ``(\\*\\*|\\*)(?=\\S)(.+?)(?<=\\S)\\1`` as ``sub`` applies it), in linear time: that
    expression tries every ``*`` against the rest of the line, quadratic in a message of many."""
    if "*" not in text:
        return text
    stars = [m.start() for m in _STAR.finditer(text)]
    # where a mark may close: after a non-blank character
    singles = [i for i in stars if i > 0 and not text[i - 1].isspace()]
    doubles = [i for i in singles if text.startswith("**", i)]
    out, at = [], 0
    for i in stars:
        if i < at:
            continue  # inside what was unwrapped
        for mark, closers in (("**", doubles), ("*", singles)):
            inner = i + len(mark)
            if not text.startswith(mark, i) or inner >= len(text) or text[inner].isspace():
                continue
            k = bisect_left(closers, inner + 1)
            if k < len(closers):
                out += [text[at:i], text[inner : closers[k]]]
                at = closers[k] + len(mark)
                break
    return "".join([*out, text[at:]])


def hover_formats(caps: types.ClientCapabilities) -> Sequence[types.MarkupKind] | None:
    hover = caps.text_document.hover if caps.text_document else None
    return hover.content_format if hover else None


def documentation_formats(caps: types.ClientCapabilities) -> Sequence[types.MarkupKind] | None:
    completion = caps.text_document.completion if caps.text_document else None
    item = completion.completion_item if completion else None
    return item.documentation_format if item else None
