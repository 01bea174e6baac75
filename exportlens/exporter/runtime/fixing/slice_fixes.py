"""The fix of a range torch refuses on a slice assignment (``out[:n] = x`` into a canvas
sized ``max(n, 16)``): the same write as ``torch.slice_scatter`` (edit.slice_writes), a
rewrite that keeps every declared size. Compared with eager on the example inputs and
the declared bounds by its proof, like any rewrite."""

from __future__ import annotations

from ...core.report import Fix, Narrowing, Probe
from ...edit.slice_writes import slice_write
from ...edit.text_edits import edit_between
from ..context import Context
from ..reading.violations import Constraint, Violation, ViolationKind


def slice_write_fix(record: Constraint, ctx: Context) -> Fix | None:
    """Where a range violation stands on a slice assignment: that line as ``slice_scatter``."""
    frame = record.frame
    if not isinstance(record, Violation) or record.kind is not ViolationKind.RANGE or frame is None:
        return None
    path = ctx.sources.rel(frame.filename)
    text = ctx.read(path)
    found = slice_write(text, frame.line)
    edit = edit_between(path, text, found.text) if found else None
    if found is None or edit is None:
        return None
    title = f"Write `{found.rewritten}` for `{found.written}`: the same tensor, with no in-place copy to prove"
    return Fix(title, (edit,), preferred=True, probes=(Probe("example inputs"),), rank=Narrowing.REWRITE)
