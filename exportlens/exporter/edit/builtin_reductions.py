"""Python's ``max``/``min`` of one tensor written as the tensor's own reduction (libcst, no
torch): ``max(lengths)`` as ``lengths.max()``. The builtin iterates over the tensor's
elements, which torch.export traces as ``torch.maximum`` of one argument and refuses."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import visit_parsed


@dataclass(frozen=True)
class Reduction:
    written: str  # ``max(lengths)``
    rewritten: str  # ``lengths.max()``
    text: str  # the file with every such call on the line rewritten


def as_reductions(text: str, line: int) -> Reduction | None:
    """The file with each one-argument ``max(x)``/``min(x)`` that starts on ``line`` written
    ``x.max()``/``x.min()`` (``x`` a name or an attribute); None where there is none."""
    finder = _Calls(line)
    parsed = visit_parsed(text, finder)
    if parsed is None:
        return None
    if not finder.found:
        return None
    module = parsed
    out = module.visit(_Replace(dict(finder.found)))
    written = "`, `".join(module.code_for_node(old) for old, _ in finder.found)
    rewritten = "`, `".join(module.code_for_node(new) for _, new in finder.found)
    return Reduction(written, rewritten, out.code)


class _Calls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: list[tuple[cst.Call, cst.Call]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Name) and func.value in ("max", "min")) or len(node.args) != 1:
            return
        (arg,) = node.args
        if arg.keyword or arg.star or not isinstance(arg.value, (cst.Name, cst.Attribute)):
            return
        if self.get_metadata(PositionProvider, node).start.line == self.line:
            self.found.append((node, cst.Call(cst.Attribute(arg.value, cst.Name(func.value)))))


class _Replace(cst.CSTTransformer):
    def __init__(self, calls: dict[cst.Call, cst.Call]) -> None:
        self.calls = calls

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self.calls.get(original_node, updated_node)
