"""A tighter range where the artifact refuses a declared size at one end of a dim's range and
serves the rest (torch side): the spec edit that narrows the dim to the nearest size the
artifact was measured serving. Preferred only where that is proven: the artifact served both
bounds of the narrowed range, and every other declared size it was run at."""

from __future__ import annotations

from ...core.report import Fix
from ...spec.module_spec import example_size
from ..context import Context
from ..fixing.changes import Change, ChangeKind
from ..fixing.fixes import spec_fix
from ..naming.guard_ranges import finite
from .agree import Compared


def narrowed(refused: Compared, compared: list[Compared], ctx: Context) -> Fix | None:
    """``Set `batch` to Dim('batch', min=2)`` where ``refused`` is at one end of its dim's range;
    None where the example inputs, or sizes away from that end, fail too."""
    dim = refused.size.dim
    if dim is None or not refused.size.inside:
        return None
    low, high = (b if b is not None and finite(b) else None for b in (dim.min, dim.max))
    at_low = refused.size.size == low
    if not at_low and refused.size.size != high:
        return None
    others = [c for c in compared if c.size.inside and c is not refused]
    if any(_fails(c) for c in others if not c.size.near):  # a size the narrowed range keeps fails too
        return None
    served = {c.size.size for c in others if c.size.dim is not None and c.size.dim.name == dim.name and not _fails(c)}
    served.add(example_size(dim.name, ctx.spec.dims))
    bound = min(served) if at_low else max(served)
    other = high if at_low else low
    if other is not None and bound == other:
        return None  # one size left: a static dim, not a range
    change = (
        Change(dim.name, ChangeKind.BOUNDS, min=bound) if at_low else Change(dim.name, ChangeKind.BOUNDS, max=bound)
    )
    return spec_fix(change, ctx, preferred=other is not None and other in served)


def _fails(c: Compared) -> bool:
    return bool(c.refused or c.differs or c.eager_failed)
