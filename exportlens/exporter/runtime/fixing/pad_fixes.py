"""The fix of a size refused where a constant block is joined to a tensor (torch side).

``torch.hstack([torch.zeros(seqlen, start_pos), mask])`` makes a tensor of ``start_pos``
columns; torch.export decides while making it that a size is neither 0 nor 1, and the
program refuses ``start_pos = 0``, a Llama's prefill. The same line as a pad of the other
tensor (edit.block_pads) makes the same tensor with no such guard: a rewrite that keeps
every declared size. It is offered only where forward, with the line rewritten, gives
eager's outputs on the example inputs and at the refused sizes (rewritten.py: a block of
another dtype than the tensor beside it would change the result's); the owner's proof
compares it with the module as written on the same probes, like any rewrite.
"""

from __future__ import annotations

import torch

from ...core.report import DimSize, Fix, Narrowing, Probe
from ...edit.block_pads import block_pad
from ...edit.text_edits import edit_between
from ..context import Context
from ..inputs import Built
from ..locate import Frame
from ..proving.rewritten import keeps_results

EXAMPLE = Probe("example inputs")


def block_pad_fix(
    frame: Frame, ctx: Context, model: torch.nn.Module, refused: dict[str, int], at: Built | None
) -> Fix | None:
    """The line of ``frame`` with its constant block's concatenation written as a pad, preferred;
    None where the line has none, or forward gives other outputs with it (on the example
    inputs, or ``at`` the sizes the program refuses, ``refused``)."""
    path = ctx.sources.rel(frame.filename)
    text = ctx.read(path)
    found = block_pad(text, frame.line)
    edit = edit_between(path, text, found.text) if found else None
    if found is None or edit is None:
        return None
    # a probe at other sizes holds one dim (probes.inputs_of): a corner is proven at its bounds
    sizes = [DimSize(name, size) for name, size in refused.items()]
    probes: tuple[Probe, ...] = (EXAMPLE,)
    if len(sizes) == 1:
        probes += (Probe(f"example inputs at {sizes[0].dim} = {sizes[0].size}", sizes=(sizes[0],)),)
    title = f"Write `{found.rewritten}` for `{found.written}`: the same tensor, with no guard on its size"
    fix = Fix(title, (edit,), preferred=True, probes=probes, rank=Narrowing.REWRITE)
    if keeps_results(model, fix, str(ctx.root), text, [ctx.built, *([at] if at else [])]) is False:
        return None
    return fix
