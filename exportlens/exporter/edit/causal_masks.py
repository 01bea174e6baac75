"""``is_causal=`` given a computed test, written as the causal mask itself (libcst, no torch):
``F.scaled_dot_product_attention(q, k, v, is_causal=q.shape[2] > 1)`` as ``…(q, k, v,
attn_mask=torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril())``.
While exporting, a test of sizes is a symbolic bool, which the op's ``bool`` argument refuses;
the mask is a tensor the program keeps. It is always causal: where the test was false it must
allow every key (a single query over a single key), which the fix's probes check."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import visit_parsed
from .python_edits import importing_torch

_PLAIN = (cst.Name, cst.Attribute)  # a query and key named, so the mask reads them without running a call twice


@dataclass(frozen=True)
class CausalMask:
    written: str  # ``is_causal=causal``
    rewritten: str  # ``attn_mask=torch.ones(...).tril()``
    text: str  # the file with it rewritten (``import torch`` added where missing)


def causal_mask(text: str, line: int) -> CausalMask | None:
    """The file with the ``scaled_dot_product_attention`` call on ``line`` given its causal mask
    for a computed ``is_causal`` (one with no ``attn_mask``, its query and key plain names);
    None for any other line."""
    finder = _Calls(line)
    parsed = visit_parsed(text, finder)
    if parsed is None:
        return None
    if finder.found is None:
        return None
    node, old, new = finder.found
    module = parsed
    call = node.with_changes(args=[new if a is old else a for a in node.args])
    rewritten = module.deep_replace(node, call)
    assert isinstance(rewritten, cst.Module)
    written, said = module.code_for_node(old), module.code_for_node(new)
    return CausalMask(written.rstrip(", "), said.rstrip(", "), importing_torch(rewritten.code))


class _Calls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.found: tuple[cst.Call, cst.Arg, cst.Arg] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None or self.get_metadata(PositionProvider, node).start.line != self.line:
            return
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if name == "scaled_dot_product_attention":
            self.found = _masked(node)


def _masked(node: cst.Call) -> tuple[cst.Call, cst.Arg, cst.Arg] | None:
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    keyword = {a.keyword.value: a for a in node.args if a.keyword is not None}
    query = keyword["query"].value if "query" in keyword else positional[0] if positional else None
    key = keyword["key"].value if "key" in keyword else positional[1] if len(positional) > 1 else None
    causal = keyword.get("is_causal")
    if causal is None or "attn_mask" in keyword or len(positional) > 3:  # (a fourth positional is the mask)
        return None
    if isinstance(causal.value, cst.Name) and causal.value.value in ("True", "False"):
        return None  # a constant torch takes as it is
    if not isinstance(query, _PLAIN) or not isinstance(key, _PLAIN):
        return None
    q, k = cst.Module([]).code_for_node(query), cst.Module([]).code_for_node(key)
    mask = cst.parse_expression(f"torch.ones({q}.shape[-2], {k}.shape[-2], dtype=torch.bool, device={q}.device).tril()")
    return node, causal, causal.with_changes(keyword=cst.Name("attn_mask"), value=mask)
