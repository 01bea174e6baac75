"""A slice assignment written as the tensor it makes (libcst, no torch): ``out[:n] = x`` as
``out = torch.slice_scatter(out, x, dim=0, start=0, end=n)``. Into a canvas sized
``max(n, 16)``, torch.export must prove ``n <= max(16, n)`` for the in-place copy and its
value ranges cannot; ``slice_scatter`` makes the same tensor and needs no such proof."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import visit_parsed
from .python_edits import importing_torch


@dataclass(frozen=True)
class SliceWrite:
    written: str  # the statement as the user wrote it
    rewritten: str  # as a ``slice_scatter``
    text: str  # the file with it rewritten (``import torch`` added where missing)


def slice_write(text: str, line: int) -> SliceWrite | None:
    """The file with the slice assignment on ``line`` (one axis sliced, the others whole,
    no step, into a plain name) written as ``torch.slice_scatter``; None for any other line."""
    finder = _Writes(line)
    parsed = visit_parsed(text, finder)
    if parsed is None:
        return None
    if finder.found is None:
        return None
    node, new = finder.found
    module = parsed
    rewritten = module.deep_replace(node, new)
    assert isinstance(rewritten, cst.Module)
    return SliceWrite(module.code_for_node(node), module.code_for_node(new), importing_torch(rewritten.code))


class _Writes(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: tuple[cst.Assign, cst.Assign] | None = None

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.found is None and self.get_metadata(PositionProvider, node).start.line == self.line:
            new = _as_scatter(node)
            self.found = (node, new) if new is not None else None


def _as_scatter(node: cst.Assign) -> cst.Assign | None:
    if len(node.targets) != 1 or not isinstance(target := node.targets[0].target, cst.Subscript):
        return None
    if not isinstance(target.value, cst.Name):  # ``self.buf[:n]``: rebinding would not write the module's buffer
        return None
    axes = [e.slice for e in target.slice]
    if not all(isinstance(a, cst.Slice) and a.step is None for a in axes):
        return None
    cut = [k for k, a in enumerate(axes) if isinstance(a, cst.Slice) and (a.lower or a.upper)]
    if len(cut) != 1:
        return None
    axis = axes[cut[0]]
    assert isinstance(axis, cst.Slice)
    args = [
        cst.Arg(target.value),
        cst.Arg(node.value),
        cst.Arg(cst.Integer(str(cut[0])), keyword=cst.Name("dim")),
        cst.Arg(axis.lower or cst.Integer("0"), keyword=cst.Name("start")),
    ]
    if axis.upper is not None:
        args.append(cst.Arg(axis.upper, keyword=cst.Name("end")))
    args = [
        a.with_changes(equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))) if a.keyword else a
        for a in args
    ]
    call = cst.Call(cst.Attribute(cst.Name("torch"), cst.Name("slice_scatter")), args)
    return node.with_changes(targets=[cst.AssignTarget(target.value)], value=call)
