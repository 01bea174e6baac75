"""A lowering's problems as findings: on the user's line where a graph node names it, on the
dim's spec line where a size shows it, else on the class (torch side)."""

from __future__ import annotations

from collections.abc import Callable

from ...core import codes
from ...core.report import Finding, Fix, Severity
from ..context import Context
from ..locate import deepest_in_text, source_line
from ..naming.explain import at
from ..naming.guard_ranges import finite
from .agree import Compared
from .handoff import Failure
from .where import where_failed

NAMES = {"aoti": "AOTInductor", "onnx": "ONNX", "executorch": "ExecuTorch"}


def failure_finding(target: str, failure: Failure, ctx: Context, said: Callable[[str], str]) -> Finding:
    """EL601 (an operation the target has no translation for) or EL602 (lowering raised), on the
    line whose node the target raised on."""
    failed = where_failed(failure.places, ctx.sources)
    text = said(failure.text)
    line = f"`{source_line(failed.frame.filename, failed.frame.line)}`" if failed.frame else "the program"
    if failure.untranslated and failed.op:
        message = (
            f"{line} has no {NAMES[target]} translation: the exporter has no function for `{failed.op}` (what it"
            " calls, decomposed); write it with operations ONNX has, or give the exporter one in"
            " `custom_translation_table`"
        )
        return at(ctx, codes.LOWERING_UNSUPPORTED, message, failed.frame, detail=text)
    if failure.outside_core:
        message = (
            f"{line} calls `{failure.outside_core}`, which is not in Core ATen, the operation set {NAMES[target]}"
            " lowers: write it with Core ATen operations"
        )
        return at(ctx, codes.LOWERING_FAILED, message, failed.frame, detail=text)
    op = f" (at `{failed.op}`)" if failed.op else ""
    message = f"lowering for {NAMES[target]} failed on {line}{op}: {text}"
    return at(ctx, codes.LOWERING_FAILED, message, failed.frame, detail=text)


def unloaded_finding(target: str, failure: Failure, ctx: Context) -> Finding:
    """EL602 on the class: the program calls operations the user's code registers, and the
    lowering process, which imports none of it, cannot load it."""
    ops = ", ".join(f"`{op.removesuffix('.default')}`" for op in failure.unknown_ops)
    message = (
        f"lowering for {NAMES[target]} cannot load the program: it calls {ops}, which your code registers, and the"
        " lowering runs apart from your code, which the sandbox keeps from changing files' modes as a compiler"
        " must; register the operation in an installed package, or set `sandbox = false` in this module's table"
        " to lower it beside your code"
    )
    return at(ctx, codes.LOWERING_FAILED, message, None, detail=failure.text)


def differs_finding(name: str, differ: list[Compared], ctx: Context) -> Finding:
    """EL603 on the first size's spec line: every size where the artifact differs, and the largest error."""
    where = _sizes([str(c.size) for c in differ])
    errors = [c.error for c in differ if c.error is not None]
    how = f"its outputs differ by up to {max(errors):.3g}" if errors else differ[0].differs
    message = f"{name} answers otherwise than eager at {where}: {how}"
    return _on_size(codes.LOWERED_DIFFERS, message, differ[0], ctx)


def sizes_finding(name: str, c: Compared, ctx: Context, fixes: tuple[Fix, ...] = ()) -> Finding:
    dim = c.size.dim
    declared = f"`{dim.name}` is declared as {_range(dim)}" if dim is not None else ""
    if c.size.inside:
        frame = deepest_in_text(ctx.sources, c.stack)
        line = f"`{source_line(frame.filename, frame.line)}`: " if frame else ""
        declared = f" ({declared})" if declared else ""
        message = f"{line}{name} refuses {c.size}{declared}, where eager runs: {c.refused}"
        if frame is not None:
            return at(ctx, codes.LOWERED_SIZES, message, frame, fixes=fixes)
        return _on_size(codes.LOWERED_SIZES, message, c, ctx, fixes=fixes)
    why = (
        f"where eager fails ({c.eager_failed})" if c.eager_failed else f"and answers otherwise than eager ({c.differs})"
    )
    message = (
        f"{name} accepts {c.size}, outside the declared range ({declared}), {why}: its runtime does not"
        f" check the range, so whatever serves it must"
    )
    return _on_size(codes.LOWERED_SIZES, message, c, ctx, severity=Severity.WARNING)


def _sizes(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _on_size(code: codes.Code, message: str, c: Compared, ctx: Context, **kwargs) -> Finding:
    """On the dim's spec line, or (the example inputs) the module's spec."""
    key = f"dims.{c.size.dim.name}" if c.size.dim is not None else None
    loc = ctx.spec.where(key) if key else ctx.spec.location
    return codes.finding_at(code, message, loc.path, loc.span, **kwargs)


def _range(dim) -> str:
    low = dim.min if dim.min is not None and finite(dim.min) else 0
    high = dim.max if dim.max is not None and finite(dim.max) else "∞"
    return f"[{low}, {high}]"
