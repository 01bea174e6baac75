"""A lowering's problems as findings: on the user's line where a graph node names it, on the
dim's spec line where a size shows it, else on the class (torch side)."""

from __future__ import annotations

from collections.abc import Callable

from ...core import codes
from ...core.report import Finding, Severity
from ..compat.lowering import chain, no_translation
from ..context import Context
from ..explain import at
from ..holds import finite
from ..locate import deepest_in_text, source_line
from ..violations import first_line
from .agree import Compared
from .artifact import Artifact
from .where import where_failed

NAMES = {"aoti": "AOTInductor", "onnx": "ONNX", "executorch": "ExecuTorch"}


def failure_finding(target: str, exc: BaseException, ep, ctx: Context, said: Callable[[str], str]) -> Finding:
    """EL601 (an operation the target has no translation for) or EL602 (lowering raised), on the
    line whose node the target raised on."""
    failed = where_failed(exc, ep, ctx.sources)
    innermost = _innermost(exc)
    text = said(f"{type(innermost).__name__}: {first_line(str(innermost))[:300]}")
    line = f"`{source_line(failed.frame.filename, failed.frame.line)}`" if failed.frame else "the program"
    if no_translation(exc) and failed.op:
        message = (
            f"{line} has no {NAMES[target]} translation: the exporter has no function for `{failed.op}` (what it"
            " calls, decomposed); write it with operations ONNX has, or give the exporter one in"
            " `custom_translation_table`"
        )
        return at(ctx, codes.LOWERING_UNSUPPORTED, message, failed.frame, detail=text)
    op = f" (at `{failed.op}`)" if failed.op else ""
    message = f"lowering for {NAMES[target]} failed on {line}{op}: {text}"
    return at(ctx, codes.LOWERING_FAILED, message, failed.frame, detail=text)


def differs_finding(target: str, artifact: Artifact, c: Compared, ctx: Context) -> Finding:
    message = f"{artifact.name} answers otherwise than eager at {c.size}: {c.differs}"
    return _on_size(codes.LOWERED_DIFFERS, message, c, ctx)


def sizes_finding(target: str, artifact: Artifact, c: Compared, ctx: Context) -> Finding:
    dim = c.size.dim
    declared = f"`{dim.name}` is declared as {_range(dim)}" if dim is not None else ""
    if c.size.inside:
        frame = deepest_in_text(ctx.sources, c.stack)
        line = f"`{source_line(frame.filename, frame.line)}`: " if frame else ""
        declared = f" ({declared})" if declared else ""
        message = f"{line}{artifact.name} refuses {c.size}{declared}, where eager runs: {c.refused}"
        return at(ctx, codes.LOWERED_SIZES, message, frame) if frame else _on_size(codes.LOWERED_SIZES, message, c, ctx)
    why = (
        f"where eager fails ({c.eager_failed})" if c.eager_failed else f"and answers otherwise than eager ({c.differs})"
    )
    message = (
        f"{artifact.name} accepts {c.size}, outside the declared range ({declared}), {why}: its runtime does not"
        f" check the range, so whatever serves it must"
    )
    return _on_size(codes.LOWERED_SIZES, message, c, ctx, severity=Severity.WARNING)


def _on_size(code: codes.Code, message: str, c: Compared, ctx: Context, **kwargs) -> Finding:
    """On the dim's spec line, or (the example inputs) the module's spec."""
    key = f"dims.{c.size.dim.name}" if c.size.dim is not None else None
    loc = ctx.spec.where(key) if key else ctx.spec.location
    return codes.finding_at(code, message, loc.path, loc.span, **kwargs)


def _range(dim) -> str:
    low = dim.min if dim.min is not None and finite(dim.min) else 0
    high = dim.max if dim.max is not None and finite(dim.max) else "∞"
    return f"[{low}, {high}]"


def _innermost(exc: BaseException) -> BaseException:
    """The first cause: what the target itself said, under its wrappers' "see above"."""
    return list(chain(exc))[-1]
