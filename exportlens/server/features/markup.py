"""Hover and completion documentation in the format the client declared: markdown where it
takes markdown, else plain text (eglot without markdown-mode, for one, shows backticks and
fences as they are written)."""

from __future__ import annotations

import re

from lsprotocol import types

_FENCE = re.compile(r"^\s*```")
_CODE = re.compile(r"(`[^`\n]*`)")
_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")


def content(markdown: str, formats: list[types.MarkupKind] | None) -> types.MarkupContent:
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
        out.append("".join(p[1:-1] if i % 2 else _EMPHASIS.sub(r"\2", p) for i, p in enumerate(parts)))
    return "\n".join(out)


def hover_formats(caps: types.ClientCapabilities) -> list[types.MarkupKind] | None:
    hover = caps.text_document.hover if caps.text_document else None
    return hover.content_format if hover else None


def documentation_formats(caps: types.ClientCapabilities) -> list[types.MarkupKind] | None:
    completion = caps.text_document.completion if caps.text_document else None
    item = completion.completion_item if completion else None
    return item.documentation_format if item else None
