"""The fix of a dim torch fixed to the 0 or 1 its example traced it at (its 0/1
specialization): another example inside the declared range, which keeps the dim dynamic
and narrows nothing the table declares. Its proof says whether that was all."""

from __future__ import annotations

from ...core.report import Fix, Narrowing
from ...edit.spec_tables import set_dim_bounds
from ...edit.text_edits import edit_between
from ...spec.loading import SpecSource
from ..context import Context
from ..reading.violations import Constraint, Specialization


def example_size_fix(record: Constraint, ctx: Context) -> Fix | None:
    """Where a dim of a pyproject table traced at 0 or 1 was fixed to it: its example moved to
    the least size above 1 that its range allows."""
    if not isinstance(record, Specialization) or record.derived or record.cast or record.by_guards:
        return None
    spec, dim = ctx.spec, record.dim
    declared = spec.dims.get(dim) if spec.source is SpecSource.PYPROJECT else None
    if declared is None or declared.example != record.value or record.value > 1:
        return None
    size = max(2, declared.min or 0)
    if declared.max is not None and size > declared.max:
        return None
    path = spec.location.path
    old = ctx.read(path)
    new = set_dim_bounds(old, spec.target, dim, example=size)
    edit = edit_between(path, old, new) if new else None
    title = f"Trace with `{dim}` = {size}: an example of {record.value} makes torch fix `{dim}` to it"
    return Fix(title, (edit,), preferred=True, rank=Narrowing.EXAMPLE) if edit else None
