"""A call on a line as written (``torch.bincount(ids)``), and the same call told the size its
result must have (``torch.bincount(ids, minlength=8)``) (libcst, no torch)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from .at_line import visit_parsed


def call_named(text: str, line: int, name: str) -> str | None:
    """The first call of ``name`` (``bincount``, ``torch.bincount``, ``ids.bincount``) that
    starts on ``line``, as written; None where there is none or the file does not parse."""
    found = _find(text, line, name)
    return found[0].code_for_node(found[1]) if found else None


def with_keyword(text: str, line: int, name: str, keyword: str, value: int) -> tuple[str, str] | None:
    """The file with ``keyword=value`` added to that call (``minlength=8``), and the call as
    rewritten; None where there is no such call, or it passes ``keyword`` (or more than its data) already."""
    found = _find(text, line, name)
    if found is None:
        return None
    module, call, start, end = found
    if (
        any(a.keyword is not None and a.keyword.value == keyword for a in call.args)
        or len(call.args) != 1
        or call.args[0].star
    ):
        return None
    arg = cst.Arg(
        cst.Integer(str(value)),
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    first = call.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    new = module.code_for_node(call.with_changes(args=(first, arg)))
    return text[:start] + new + text[end:], new


def _find(text: str, line: int, name: str) -> tuple[cst.Module, cst.Call, int, int] | None:
    finder = _Calls(line, name)
    module = visit_parsed(text, finder)
    if module is None or finder.found is None:
        return None
    call, where = finder.found
    return (
        module,
        call,
        _offset(text, where.start.line, where.start.column),
        _offset(text, where.end.line, where.end.column),
    )


def _offset(text: str, line: int, column: int) -> int:
    return sum(len(ln) for ln in text.splitlines(keepends=True)[: line - 1]) + column


class _Calls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int, name: str) -> None:
        self.line, self.name = line, name
        self.found: tuple[cst.Call, CodeRange] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = (
            func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        )
        if self.found is not None or called != self.name:
            return
        where = self.get_metadata(PositionProvider, node)
        if where.start.line == self.line:
            self.found = (node, where)
