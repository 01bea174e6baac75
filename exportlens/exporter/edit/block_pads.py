"""A concatenation with a constant block written as a pad (libcst, no torch).

``torch.hstack([torch.zeros(seqlen, start_pos), mask])`` (Meta's reference Llama mask)
makes a tensor whose size is a dynamic int; torch.export specializes a size at 0 and 1
while it makes one (``start_pos != 1``, ``seqlen*start_pos >= 2``), so the program
refuses the prefill, ``start_pos = 0``. ``F.pad(mask, (start_pos, 0), value=0.0)`` is
the same tensor (the block's values beside ``mask``, along the joined dim) and makes no
tensor of that size alone. Any ``torch.cat``/``concat``/``concatenate``/``hstack``/``vstack``
of two tensors, one of them ``torch.zeros``/``ones``/``full`` with its sizes written out.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import visit_parsed
from .python_edits import importing_torch

JOINS = ("cat", "concat", "concatenate", "hstack", "vstack")
FILLS = {"zeros": "0.0", "ones": "1.0"}  # the block's value; ``full`` writes its own
BLOCK_KEYWORDS = {"device", "dtype"}  # what else a block may say: the pad keeps the other's


@dataclass(frozen=True)
class BlockPad:
    written: str  # the concatenation as the user wrote it
    rewritten: str  # as a pad
    text: str  # the file with it rewritten (``import torch`` added where missing)


@dataclass(frozen=True)
class _Block:
    sizes: tuple[cst.BaseExpression, ...]
    value: cst.BaseExpression


def block_pad(text: str, line: int) -> BlockPad | None:
    """The file with the concatenation whose constant block starts on ``line`` written as
    ``pad`` of the other tensor; None where there is none."""
    finder = _Joins(line)
    module = visit_parsed(text, finder)
    if module is None or finder.found is None:
        return None
    node, new = finder.found
    functional = _functional_alias(module)
    if functional is not None:
        new = new.with_changes(func=cst.Attribute(cst.Name(functional), cst.Name("pad")))
    rewritten = module.deep_replace(node, new)
    assert isinstance(rewritten, cst.Module)
    text = rewritten.code if functional else importing_torch(rewritten.code)
    return BlockPad(module.code_for_node(node), module.code_for_node(new), text)


class _Joins(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: tuple[cst.Call, cst.Call] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None or _torch_call(node, JOINS) is None:
            return
        parts = _parts(node)
        blocks = [_block(p) for p in parts or ()]
        if parts is None or sum(b is not None for b in blocks) != 1:
            return
        at, block = next((i, b) for i, b in enumerate(blocks) if b is not None)
        if self.get_metadata(PositionProvider, parts[at]).start.line == self.line:
            new = _as_pad(node, parts, at, block)
            self.found = (node, new) if new is not None else None


def _torch_call(node: cst.Call, names: tuple[str, ...]) -> str | None:
    """The name of ``torch.<name>(...)`` where it is one of ``names``."""
    func = node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "torch":
        return func.attr.value if func.attr.value in names else None
    return None


def _parts(node: cst.Call) -> tuple[cst.BaseExpression, ...] | None:
    """The two tensors joined, written as a list or tuple; None for any other form."""
    first = node.args[0] if node.args else None
    if first is None or (first.keyword is not None and first.keyword.value != "tensors") or first.star:
        return None
    if not isinstance(first.value, (cst.List, cst.Tuple)) or len(first.value.elements) != 2:
        return None
    if any(isinstance(e, cst.StarredElement) for e in first.value.elements):
        return None
    return tuple(e.value for e in first.value.elements)


def _block(node: cst.BaseExpression) -> _Block | None:
    """``torch.zeros(a, b)``, ``torch.ones((a, b), device=...)``, ``torch.full((a, b), v)``:
    its sizes written out, and its value; None for anything else."""
    kind = _torch_call(node, (*FILLS, "full")) if isinstance(node, cst.Call) else None
    if kind is None:
        return None
    assert isinstance(node, cst.Call)
    if any(a.star for a in node.args):
        return None
    positional = [a.value for a in node.args if a.keyword is None]
    named = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if kind == "full":
        if len(positional) > 2:
            return None
        size = positional[0] if positional else named.pop("size", None)
        value = positional[1] if len(positional) > 1 else named.pop("fill_value", None)
        sizes = _written_sizes(size)
    else:
        value = cst.Float(FILLS[kind])
        size = named.pop("size", None)
        sizes = _written_sizes(size) if size is not None else _written_sizes(*positional)
    if sizes is None or value is None or not set(named) <= BLOCK_KEYWORDS:
        return None
    return _Block(sizes, value)


def _written_sizes(*args: cst.BaseExpression | None) -> tuple[cst.BaseExpression, ...] | None:
    """Sizes as separate arguments (two or more), or one tuple or list of them: a single
    name may be a shape or a size, and is not read."""
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        elements = args[0].elements
        if elements and not any(isinstance(e, cst.StarredElement) for e in elements):
            return tuple(e.value for e in elements)
        return None
    if len(args) >= 2 and all(a is not None and not isinstance(a, (cst.Tuple, cst.List)) for a in args):
        return tuple(a for a in args if a is not None)
    return None


def _joined_dim(node: cst.Call, rank: int) -> int | None:
    """The dim the call joins along, for tensors of ``rank`` dims; None where it is not written
    as a literal, or the call says more (``out=``)."""
    kind = _torch_call(node, JOINS)
    rest = node.args[1:]
    if kind in ("hstack", "vstack"):
        if rest:
            return None
        return (0 if rank == 1 else 1) if kind == "hstack" else (0 if rank >= 2 else None)
    if len(rest) > 1 or (rest and rest[0].keyword is not None and rest[0].keyword.value not in ("dim", "axis")):
        return None
    dim = _integer(rest[0].value) if rest else 0
    if dim is None or not -rank <= dim < rank:
        return None
    return dim % rank


def _integer(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _integer(node.expression)
        return -inner if inner is not None else None
    return None


def _as_pad(node: cst.Call, parts: tuple[cst.BaseExpression, ...], at: int, block: _Block) -> cst.Call | None:
    """``torch.nn.functional.pad(other, (0, 0, ..., width, 0), value=v)``: the block's width
    before the other tensor along the joined dim (after it where the block comes second)."""
    rank = len(block.sizes)
    dim = _joined_dim(node, rank)
    if dim is None:
        return None
    width = block.sizes[dim]
    zero = cst.Integer("0")
    pair = [width, zero] if at == 0 else [zero, width]
    amounts = [zero, zero] * (rank - 1 - dim) + pair  # pairs from the last dim backwards
    no_space = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    args = [
        cst.Arg(parts[1 - at]),
        cst.Arg(cst.Tuple([cst.Element(a) for a in amounts])),
        cst.Arg(block.value, keyword=cst.Name("value"), equal=no_space),
    ]
    func = cst.parse_expression("torch.nn.functional.pad")
    return cst.Call(func, _spaced(args))


def _spaced(args: list[cst.Arg]) -> list[cst.Arg]:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [a.with_changes(comma=comma) for a in args[:-1]] + args[-1:]


def _functional_alias(module: cst.Module) -> str | None:
    """The name the file gives ``torch.nn.functional`` at its top (``import torch.nn.functional
    as F``, ``from torch.nn import functional as F``), to write ``F.pad``; None where none."""
    for stmt in module.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                names = [(module.code_for_node(a.name), a.asname) for a in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                base = module.code_for_node(small.module)
                aliases = small.names if isinstance(small.names, (list, tuple)) else ()
                names = [(f"{base}.{module.code_for_node(a.name)}", a.asname) for a in aliases]
            else:
                continue
            for name, alias in names:
                if name == "torch.nn.functional" and alias is not None and isinstance(alias.name, cst.Name):
                    return alias.name.value
    return None
