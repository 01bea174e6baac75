"""Records of what torch said -> Findings on the user's lines, in the user's names.

The records come from ``failures`` and ``violations``, which read torch's
exceptions; this module only says them, and asks ``fixes`` for their edits.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import Any

import torch

from ...core import codes
from ...core.report import Finding, Fix
from ...edit.at_line import branch_test, span_at, tensor_test
from ...edit.int_sizes import scaled_int
from ...edit.numbers import Conversion
from ...edit.python_edits import assert_async
from ...edit.text_edits import edit_between
from ..compat.internals import pytree
from ..context import Context
from ..fixing.export_only import export_only
from ..fixing.fixes import narrowing_less, size_in_code, spec_fixes
from ..fixing.remedies import EXAMPLE, asked, kept_check, remedy_fixes, values
from ..library import in_library
from ..locate import Frame, source_line
from ..reading.failures import DataDependent, FakeKernel, OutputType, Raised, Record, SpecRejected, Untraceable
from ..reading.violations import Constraint, Specialization, Violation, ViolationKind, first_line
from .specialized import library_related, specialized_message
from .symbols import SYMBOL
from .together import said_declared, widened, with_shared_cut


def explain(records: tuple[Record, ...], ctx: Context) -> list[Finding]:
    """Each record as a finding; an error's cause carried on it (``Raised.cause``: outcome.py reads it)."""
    found = [finding(r, ctx) for r in records]
    return [replace(f, cause=r.cause) if isinstance(r, Raised) else f for r, f in zip(records, found)]


def finding(record: Record, ctx: Context) -> Finding:
    """One record as a finding: on the user's line where it has one, else on the spec or the class."""
    match record:
        case Violation() | Specialization():
            return constraint_finding(record, ctx)
        case DataDependent():
            return data_dependent(record, ctx)
        case SpecRejected():
            return _on_spec(
                ctx,
                codes.SPEC_INVALID,
                f"torch.export rejects the spec: {first_line(record.message)}",
                detail=record.message,
            )
        case OutputType():
            return unsupported_output(record, ctx)
        case FakeKernel():
            return _fake_kernel(record, ctx)
        case Untraceable():
            code = codes.MISSING_FAKE_KERNEL if record.fake_kernel else codes.UNSUPPORTED_OP
            return at(ctx, code, f"torch.export cannot trace this: {record.text}", record.frame, detail=record.detail)
        case Raised(by_forward=True, eager=""):
            message, fixes = export_only(record, ctx)  # a memoized call, `max(tensor)`: each rewritten
            return at(ctx, codes.EXPORT_ONLY_FAILURE, message, record.frame, detail=record.detail, fixes=fixes)
        case Raised(by_forward=True):
            how = "on the example inputs (and eagerly too: a bug in the code or the spec, not an export problem)"
            message = f"forward raised {record.error} {how if record.eager else 'while exporting'}: {record.text}"
            return at(ctx, codes.FORWARD_FAILED, message, record.frame, detail=record.detail)
        case Raised():
            return at(
                ctx,
                codes.INTERNAL,
                f"torch.export failed: {record.error}: {record.text}",
                record.frame,
                detail=record.detail,
            )
    raise TypeError(f"no finding for {record!r}")


def at(
    ctx: Context, code: codes.Code, message: str, frame: Frame | None, expression: str | None = None, **kwargs: Any
) -> Finding:
    """A finding on ``frame``'s line (columns from libcst), else on the module's class name."""
    if frame is None:
        return codes.finding_at(code, message, ctx.module.path, ctx.module.name_span, **kwargs)
    path = ctx.sources.rel(frame.filename)
    place = span_at(ctx.read(path), frame.line, expression)
    return codes.finding_at(code, message, path, place, **kwargs)


def _on_spec(ctx: Context, code: codes.Code, message: str, key: str | None = None, **kwargs: Any) -> Finding:
    """A finding on the spec (or on one of its keys, ``dims.seq``)."""
    loc = ctx.spec.where(key) if key else ctx.spec.location
    return codes.finding_at(code, message, loc.path, loc.span, **kwargs)


def _fake_kernel(record: FakeKernel, ctx: Context) -> Finding:
    if record.register:
        message = (
            f"custom op `{record.op}` has no fake kernel, which export needs to trace it:"
            f" add one with {record.register}"
        )
        return at(ctx, codes.MISSING_FAKE_KERNEL, message, record.frame, detail=record.detail)
    code = codes.MISMATCHED_FAKE_KERNEL if record.mismatched else codes.MISSING_FAKE_KERNEL
    message = f"{record.op}: {code.title}; register one with torch.library.register_fake"
    return at(ctx, code, message, record.frame, detail=record.detail)


def unsupported_output(record: OutputType, ctx: Context) -> Finding:
    """``return Cache(...)``: placed on forward's last ``return``, said with the fix."""
    name = record.qualified.rsplit(".", 1)[-1]
    message = (
        f"forward returns `{name}` ({record.qualified}), which torch.export cannot flatten into tensors: "
        f"return its tensors instead, or register `{name}` with torch.utils._pytree.register_pytree_node"
    )
    if record.qualified.startswith("transformers."):
        message += "; for a transformers model, `use_cache=False` in its config keeps the cache out of the output"
    line = _return_line(ctx)
    if line is None:
        return at(ctx, codes.UNSUPPORTED_OUTPUT, message, None, detail=record.detail)
    place = span_at(ctx.read(ctx.module.path), line, None)
    return codes.finding_at(codes.UNSUPPORTED_OUTPUT, message, ctx.module.path, place, detail=record.detail)


def _return_line(ctx: Context) -> int | None:
    """The last ``return`` of forward, when forward is written in the module's own file."""
    forward = ctx.module.forward
    lines = ctx.read(ctx.module.path).splitlines()
    if forward is None or forward.name_span.line > len(lines) or "def forward" not in lines[forward.name_span.line - 1]:
        return None  # forward is inherited from another file, or torch's
    body = range(forward.span.line, min(forward.span.end_line or forward.span.line, len(lines)) + 1)
    returns = [n for n in body if lines[n - 1].lstrip().startswith("return")]
    return returns[-1] if returns else None


# -- data-dependent guards ----------------------------------------------------------


def data_dependent(record: DataDependent, ctx: Context) -> Finding:
    """``if n > 3`` where ``n`` came from tensor data: name it, and offer ``torch._check``."""
    cond, names = record.condition, record.names
    truth = _tensor_truth(record, ctx)
    if truth is not None:
        return truth
    if (asked_for := asked(record, ctx)) is not None:
        return _asked_number(record, ctx, asked_for)
    named = values(record)  # (never torch's own ``u0``)
    origin = ", ".join(f"`{n}`" for n in named) or "a value read from a tensor"
    said = _as_written(record, ctx, named) or names.say(cond)
    if SYMBOL.search(said):  # a value the line never names: its test as written, else no words of torch's
        frame = record.frame
        written = branch_test(ctx.read(ctx.sources.rel(frame.filename)), frame.line) if frame else None
        said = f"`{written}`" if written else "what this line tests"
    else:
        said = f"`{said}`"
    message = (
        f"{said} depends on the values inside a tensor ({origin} is only known when the model runs),"
        " so export cannot decide it"
    )
    fixes = ctx.fix_or("remedies", partial(remedy_fixes, record, ctx), ())
    if not fixes:
        message += "; compute it from shapes, or use torch.cond for both branches"
    elif _on_meta(ctx):
        message += (
            "; on meta the example inputs hold no values, so which way they go is not known: check on cpu for that"
        )
    # the condition as code is how the line most likely writes it: the finding's columns
    found = at(ctx, codes.DATA_DEPENDENT, message, record.frame, names.write(cond), fixes=fixes, detail=record.detail)
    return in_library(found, record.library)


def _asked_number(record: DataDependent, ctx: Context, asked_for: Conversion) -> Finding:
    """``capacity = int(....item() * f)``: Python asks for the number itself, which export
    does not have; said as the line writes it (not torch's ``int(1.25*float(...))``)."""
    read = [f"`{v}`" for v in values(record) if v != asked_for.call] or [f"`{asked_for.argument}`"]
    kind = f"a Python {asked_for.builtin}"
    asks = f"asks for `{asked_for.target}` as {kind}" if asked_for.target else f"asks for {kind}"
    known = "is" if len(read) == 1 else "are"
    message = (
        f"`{asked_for.call}` {asks}, but {', '.join(read)} {known} only known when the model runs,"
        " so export cannot give one"
    )
    fixes = ctx.fix_or("remedies", partial(remedy_fixes, record, ctx), ())
    # the way its first fix keeps the number: a tensor's own ``.item()``, else ``torch.sym_int``
    keep = f"{asked_for.argument}.item()" if asked_for.argument in record.tensors else f"{asked_for.symbolic}(...)"
    message += (
        f"; `{keep}` gives the same number and keeps it symbolic" if fixes else "; compute it from shapes instead"
    )
    return at(ctx, codes.DATA_DEPENDENT, message, record.frame, asked_for.call, fixes=fixes, detail=record.detail)


def _on_meta(ctx: Context) -> bool:
    return any(getattr(t, "is_meta", False) for t in pytree.tree_leaves((ctx.built.args, ctx.built.kwargs)))


def _as_written(record: DataDependent, ctx: Context, values: list[str]) -> str | None:
    """The branch's own condition where it reads each value inline (``probs.max().item() >
    self.threshold``, where torch's guard holds the threshold's value, ``0.9``), or compares
    sizes (``kept.numel() == x.numel()``, which torch holds as ``kept.shape[0] == 32``)."""
    sizes = values and all(".shape[" in v for v in values)
    if record.frame is None or not values or not (sizes or all("(" in v for v in values)):
        return None
    written = branch_test(ctx.read(ctx.sources.rel(record.frame.filename)), record.frame.line)
    if written is None or not (sizes or all(v in written for v in values)):
        return None
    return written if not sizes or re.search(r"\.numel\(\)|\.size\(|\.shape\[|\blen\(", written) else None


def _tensor_truth(record: DataDependent, ctx: Context) -> Finding | None:
    """``if h.sum() > 0:`` or ``assert (x >= 0).all()``: Python asks a tensor for its truth,
    which torch reads as an unnamed ``u0 == 1``. Said as the line writes it; an assert (a
    ``torch._assert``, an ``if`` that only raises) becomes ``torch._assert_async``, which the
    exported program checks when it runs."""
    cond, frame = record.condition, record.frame
    unbacked = [
        s
        for s in cond.free_symbols
        if str(s).startswith("u") and s not in record.names.message and s not in record.names.code
    ]
    if frame is None or len(unbacked) != 1 or len(cond.free_symbols) != 1:
        return None
    path = ctx.sources.rel(frame.filename)
    text = ctx.read(path)
    written = tensor_test(text, frame.line)
    if written is None:
        return None
    message = (
        f"`{written.test}` is a tensor, and `{written.keyword}` needs it as a Python bool,"
        " which is only known when the model runs"
    )
    fixes: tuple[Fix, ...] = ()
    if written.keyword == "assert":
        new = assert_async(text, frame.line, written.test, written.message)
        edit = edit_between(path, text, new) if new else None
        fixes = (
            (Fix("Check it when the program runs: `torch._assert_async(...)`", (edit,), preferred=True),)
            if edit
            else ()
        )
        message += "; torch._assert_async makes the same check inside the exported program"
    elif (kept := ctx.fix_or("kept check", lambda: kept_check(record, ctx, written), None)) is not None:
        message += "; torch._assert_async makes the same check inside the exported program"
        fixes = (kept, *(replace(f, preferred=False) for f in remedy_fixes(record, ctx, checks=False)))
    else:
        fixes = remedy_fixes(record, ctx, checks=False)  # (a tensor is no condition to torch._check)
        if not fixes:  # where there are, they say what to do (a branch-free form may beat torch.cond)
            message += "; use torch.cond for both branches, or compute the branch from shapes"
    return at(ctx, codes.DATA_DEPENDENT, message, frame, written.test, fixes=fixes, detail=record.detail)


# -- constraint violations -------------------------------------------------------------


_VIOLATION_CODES = {
    ViolationKind.RANGE: codes.RANGE_VIOLATION,
    ViolationKind.EQUALITY: codes.EQUALITY_VIOLATION,
    ViolationKind.RELATION: codes.RELATION_VIOLATION,
    ViolationKind.OTHER: codes.GUARD_VIOLATION,
}


def constraint_finding(record: Constraint, ctx: Context) -> Finding:
    """A violation or specialization, with the fixes it carries as edits of the spec, naming
    the dims it concerns (a dim's hover in pyproject.toml finds it by them)."""
    record = widened(record, ctx)
    return with_shared_cut(record, _constraint_finding(record, ctx), ctx)


def _constraint_finding(record: Constraint, ctx: Context) -> Finding:
    fixes = ctx.fix_or("spec edit", partial(spec_fixes, record.fixes, ctx), ())
    by_guards = isinstance(record, Specialization) and record.by_guards
    in_code = None if by_guards else ctx.fix_or("size in code", lambda: size_in_code(record, ctx), None)
    if in_code is not None:  # the code is what is wrong: the spec change comes second
        fixes = (in_code, *(replace(f, preferred=False) for f in fixes))
    less = ctx.fix_or("a fix that narrows less", lambda: narrowing_less(record, ctx), None)
    if less is not None:  # it keeps what the others give up: tried first, they stay offered
        fixes = (less, *(replace(f, preferred=False) for f in fixes))
    if isinstance(record, Specialization) and record.cast:
        return _cast(record, ctx, fixes)
    if isinstance(record, Specialization):
        found = _on(ctx, codes.SPECIALIZED, specialized_message(record), record.frame, record.dim, record.detail, fixes)
        return replace(found, related=(*found.related, *library_related(record)))
    dim = record.dims[0] if record.kind is not ViolationKind.OTHER else None
    return _on(ctx, _VIOLATION_CODES[record.kind], _violated(record, ctx), record.frame, dim, record.detail, fixes)


def _cast(record: Specialization, ctx: Context, fixes: tuple[Fix, ...]) -> Finding:
    """``int(x.shape[2] * 1.5)``: said as written, with its integer form as the fix to prove
    on the probes (it must give eager's sizes on each), the spec's static size after it."""
    frame, dim = record.frame, record.dim
    text = ctx.read(ctx.sources.rel(frame.filename)) if frame else ""
    scaled = ctx.fix_or("integer size", lambda: scaled_int(text, frame.line), None) if frame else None
    if scaled is None or frame is None:
        message = (
            f"{specialized_message(record)}: torch.export keeps `int()` of a float made from `{dim}` as a constant"
        )
        return _on(ctx, codes.SPECIALIZED, message, frame, dim, record.detail, fixes)
    message = (
        f"`{scaled.written}` fixes `{dim}` to {record.value}, the example's size: `{dim}` was declared dynamic,"
        f" but torch.export keeps `int()` of a float made from it as a constant"
    )
    path = ctx.sources.rel(frame.filename)
    edit = edit_between(path, text, scaled.text)
    title = (
        f"Write `{scaled.rewritten}` for `{scaled.written}`: the same sizes in integer arithmetic, which stays symbolic"
    )
    own = (Fix(title, (edit,), preferred=True, probes=(EXAMPLE,)),) if edit else ()
    fixes = (*own, *(replace(f, preferred=False) for f in fixes)) if own else fixes
    return _on(ctx, codes.SPECIALIZED, message, frame, dim, record.detail, fixes)


def _violated(record: Violation, ctx: Context) -> str:
    if record.kind is ViolationKind.RANGE:
        dim = record.dims[0]
        declared = _declared(dim, ctx, record.declared or "unbounded")
        whence = _bounds_from(record, ctx)
        if record.always:  # no size breaks it: saying it is violated would be false
            return f"`{dim}` is declared as {declared}; this line's guard `{record.requirement}` {_UNPROVEN}"
        said = said_declared(record, declared, lambda d: _declared(d, ctx, "unbounded"))
        return f"{said}, but this line requires `{record.requirement}`" + (f" ({whence})" if whence else "")
    if record.kind is ViolationKind.EQUALITY:
        a, b = record.dims
        return f"`{a}` and `{b}` are declared as independent dims, but this line needs them equal"
    if record.kind is ViolationKind.RELATION:
        return f"`{record.dims[0]}` is declared independent, but this line needs {record.requirement}"
    return record.requirement


_UNPROVEN = "holds at every size in it, but torch.export cannot prove that and refuses the range (torch's limit)"
_ATTRIBUTE = re.compile(r"\bself\.(\w+)\b")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _bounds_from(record: Violation, ctx: Context) -> str:
    """Where the numbers of a requirement come from, as the line names them: a buffer or
    parameter's size (`self.k_cache` has 512 rows), a module's or a plain input's number
    (`self.max_len` is 128, `start_pos` is 1)."""
    frame = record.frame
    if frame is None or ctx.model is None:
        return ""
    numbers = {int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.])", record.requirement)}
    code = source_line(frame.filename, frame.line)
    said = []
    for attr in dict.fromkeys(_ATTRIBUTE.findall(code)):
        tensor = getattr(ctx.model, attr, None)
        if type(tensor) is int and tensor in numbers:  # ``if seq > self.max_len``
            said.append(f"`self.{attr}` is {tensor}")
        elif isinstance(tensor, torch.Tensor):
            for axis, size in enumerate(tensor.shape):
                if size in numbers and size > 1:
                    said.append(
                        f"`self.{attr}` has {size} rows"
                        if axis == 0
                        else f"`self.{attr}` has size {size} in dim {axis}"
                    )
    values = dict(zip(ctx.built.params, ctx.built.args)) | ctx.built.kwargs
    for name in dict.fromkeys(_NAME.findall(code)):
        value = values.get(name)
        if type(value) is int and value in numbers:
            said.append(f"`{name}` is {value}")
    return "; ".join(said)


def _declared(dim: str, ctx: Context, fallback: str) -> str:
    """The dim's range as the user declared it, ``[2, ∞]``; torch's words where it is not theirs."""
    root = ctx.built.names.roots.get(dim)
    if root is None:
        return fallback
    lo = root.min if isinstance(root.min, int) else 0
    hi = root.max if isinstance(root.max, int) and root.max < 2**62 else "∞"
    return f"[{lo}, {hi}]"


def _on(
    ctx: Context,
    code: codes.Code,
    message: str,
    frame: Frame | None,
    dim: str | None,
    detail: str,
    fixes: tuple[Fix, ...],
) -> Finding:
    """A constraint finding: on the guard's line when known, else on the dim's spec line."""
    key = f"dims.{dim}" if dim and f"dims.{dim}" in ctx.spec.locations else None
    related = (ctx.spec_related(key),)
    if frame is not None:
        return at(ctx, code, message, frame, related=related, detail=detail, fixes=fixes)
    return _on_spec(ctx, code, message, key, related=related, detail=detail, fixes=fixes)
