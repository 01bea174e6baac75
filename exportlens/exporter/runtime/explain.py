"""What torch said -> Findings on the user's lines, in the user's names (torch side)."""

from __future__ import annotations

import re
from typing import Any

import sympy
from torch._dynamo.exc import Unsupported, UserError, UserErrorType
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from ..core import codes
from ..core.report import Finding, Fix
from ..static.edits import edit_between, insert_check
from ..static.source import locate
from .context import Context
from .locate import Frame, GuardLog, source_line
from .naming import SymbolNames, from_shape_env, rename_sources


def at(ctx: Context, code: codes.Code, message: str, frame: Frame | None, expression: str | None = None, **kwargs: Any) -> Finding:
    """A finding on ``frame``'s line (columns from libcst), else on the module's class name."""
    if frame is None:
        span = ctx.module.name_span
        return codes.finding(
            code, message, ctx.module.path, span.line, column=span.column, end_line=span.end_line, end_column=span.end_column, **kwargs
        )
    path = ctx.files.relative(frame.filename)
    place = locate(ctx.read(path), frame.line, expression)
    return codes.finding(
        code, message, path, place.line, column=place.column, end_line=place.end_line, end_column=place.end_column, **kwargs
    )


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")


# -- the plain export's exception ------------------------------------------------


def explain(exc: BaseException, log: GuardLog, ctx: Context) -> list[Finding]:
    if isinstance(exc, UserError) and exc.error_type == UserErrorType.CONSTRAINT_VIOLATION:
        return constraint_findings(exc.msg, log, ctx)
    if isinstance(exc, UserError) and exc.error_type == UserErrorType.INVALID_INPUT:
        loc = ctx.spec.location  # torch rejected the spec itself (dynamic_shapes that do not fit the inputs)
        text = _first_line(exc.msg)
        return [
            codes.finding(
                codes.SPEC_INVALID,
                f"torch.export rejects the spec: {text}",
                loc.path,
                loc.line,
                column=loc.column,
                end_line=loc.end_line,
                end_column=loc.end_column,
                detail=exc.msg,
            )
        ]
    dde = _in_chain(exc, GuardOnDataDependentSymNode)
    if dde is not None:
        # non-strict: the user's frame is live in the traceback; strict: dynamo keeps it in real_stack
        frame = ctx.files.deepest_in_traceback(dde.__traceback__) or ctx.files.deepest_in_summary(getattr(exc, "real_stack", None))
        return [data_dependent(dde.cond, frame, log, ctx, detail=str(exc))]
    names = from_shape_env(log.shape_env, ctx.built.names)
    frame = ctx.files.deepest_in_traceback(exc.__traceback__)
    text = rename_sources(names.text(_first_line(getattr(exc, "msg", None) or str(exc))), ctx.built.names)
    output = re.search(r"Found <class '([\w.]+)'> in output, which is not a known type", str(exc))
    if output:
        return [unsupported_output(output.group(1), ctx, str(exc))]
    missing = re.search(r"no fake impl registered for <CustomOpDef\((.+?)\)>", str(exc))
    if missing:
        fn = re.search(r"use `(\S+)\.register_fake`", str(exc))
        how = f"`@{fn.group(1)}.register_fake`" if fn else "torch.library.register_fake"
        message = f"custom op `{missing.group(1)}` has no fake kernel, which export needs to trace it: add one with {how}"
        return [at(ctx, codes.MISSING_FAKE_KERNEL, message, frame, detail=str(exc)[-4000:])]
    if isinstance(exc, Unsupported) or _is_unsupported(exc):
        code = codes.MISSING_FAKE_KERNEL if _is_missing_fake(exc) else codes.UNSUPPORTED_OP
        return [at(ctx, code, f"torch.export cannot trace this: {text}", frame, detail=str(exc)[-4000:])]
    if frame is not None and not isinstance(exc, UserError):
        return [
            at(ctx, codes.FORWARD_FAILED, f"forward raised {type(exc).__name__} while exporting: {text}", frame, detail=str(exc)[-4000:])
        ]
    return [at(ctx, codes.INTERNAL, f"torch.export failed: {type(exc).__name__}: {text}", frame, detail=str(exc)[-4000:])]


def unsupported_output(qualified: str, ctx: Context, detail: str) -> Finding:
    """``return Cache(...)``: placed on forward's last ``return``, said with the fix."""
    name = qualified.rsplit(".", 1)[-1]
    message = (
        f"forward returns `{name}` ({qualified}), which torch.export cannot flatten into tensors: "
        f"return its tensors instead, or register `{name}` with torch.utils._pytree.register_pytree_node"
    )
    if qualified.startswith("transformers."):
        message += "; for a transformers model, `use_cache=False` in its config keeps the cache out of the output"
    line = _return_line(ctx)
    if line is None:
        return at(ctx, codes.UNSUPPORTED_OUTPUT, message, None, detail=detail[-4000:])
    place = locate(ctx.read(ctx.module.path), line, None)
    return codes.finding(
        codes.UNSUPPORTED_OUTPUT,
        message,
        ctx.module.path,
        place.line,
        column=place.column,
        end_line=place.end_line,
        end_column=place.end_column,
        detail=detail[-4000:],
    )


def _return_line(ctx: Context) -> int | None:
    """The last ``return`` of forward, when forward is written in the module's own file."""
    forward = ctx.module.forward
    lines = ctx.read(ctx.module.path).splitlines()
    if forward is None or forward.name_span.line > len(lines) or "def forward" not in lines[forward.name_span.line - 1]:
        return None  # forward is inherited from another file, or torch's
    body = range(forward.span.line, min(forward.span.end_line, len(lines)) + 1)
    returns = [n for n in body if lines[n - 1].lstrip().startswith("return")]
    return returns[-1] if returns else None


def _in_chain(exc: BaseException, kind: type) -> Any:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _is_unsupported(exc: BaseException) -> bool:
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, UnsupportedOperatorException

    if isinstance(exc, (UnsupportedOperatorException, DynamicOutputShapeException, DataDependentOutputException)):
        return True
    text = str(exc)
    return any(s in text for s in ("is not supported for tensor subclasses", "fake impl", "Meta implementation", "no fake", "FakeTensor"))


def _is_missing_fake(exc: BaseException) -> bool:
    text = str(exc)
    return "fake impl" in text or "register_fake" in text or "Meta implementation" in text


# -- data-dependent guards ----------------------------------------------------------


def data_dependent(
    cond: Any, frame: Frame | None, log: GuardLog | None, ctx: Context, *, detail: str = "", symbols: dict[str, str] | None = None
) -> Finding:
    """``if n > 3`` where ``n`` came from tensor data: name it, and offer ``torch._check``."""
    names = from_shape_env(log.shape_env if log else None, ctx.built.names)
    names = from_locals(frame.locals if frame else None, names)
    for sym, var in (symbols or {}).items():
        names.code.setdefault(sympy.Symbol(sym, integer=True), var)
        names.code.setdefault(sympy.Symbol(sym), var)
    said = names.say(cond)
    unbacked = sorted((s for s in cond.free_symbols if str(s).startswith("u")), key=str)
    origin = ", ".join(f"`{names.say(s)}`" for s in unbacked) or "a value"
    message = f"`{said}` depends on the values inside a tensor ({origin} is only known when the model runs), so export cannot decide it"
    fixes = _check_fixes(cond, frame, names, ctx)
    if not fixes:
        message += "; compute it from shapes, or use torch.cond for both branches"
    return at(ctx, codes.DATA_DEPENDENT, message, frame, _expression_text(frame, cond, names), fixes=tuple(fixes), detail=detail)


def from_locals(frame_locals: dict[str, Any] | None, out: SymbolNames) -> SymbolNames:
    """Symbols that live in the user's frame: ``n = x.item()`` names ``u0`` n; ``x.shape[0]`` names ``s77``."""
    import torch

    for var, value in (frame_locals or {}).items():
        if var.startswith("__") or var == "self":
            continue
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            expr = value.node.expr
            if isinstance(expr, sympy.Symbol):
                out.code.setdefault(expr, var)
        elif isinstance(value, torch.Tensor):
            for axis, size in enumerate(value.shape):
                if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol):
                    out.code.setdefault(size.node.expr, f"{var}.shape[{axis}]")
    return out


def _expression_text(frame: Frame | None, cond: Any, names: SymbolNames) -> str | None:
    """How the condition is most likely written on the line (for columns)."""
    return names.write(cond)


def _check_fixes(cond: Any, frame: Frame | None, names: SymbolNames, ctx: Context) -> list[Fix]:
    """Assume the condition as written (preferred: the branch the code spells out), or its negation.

    Draft export reports which way the example went, but that answer varies from
    run to run (torch 2.13), so it does not choose here."""
    if frame is None:
        return []
    fixes = []
    for i, expr in enumerate((cond, sympy.Not(cond))):
        expr = sympy.simplify_logic(expr) if isinstance(expr, sympy.Not) else expr
        code = names.write(expr)
        if code is None:
            continue
        path = ctx.files.relative(frame.filename)
        old = ctx.read(path)
        new = insert_check(old, frame.line, code)
        edit = edit_between(path, old, new) if new else None
        if edit is None:
            continue
        fixes.append(Fix(f"Assume `{code}` here: insert torch._check({code})", (edit,), preferred=i == 0))
    return fixes


# -- constraint violations -------------------------------------------------------------


_ITEM = re.compile(r"^\s*-\s+(.*)$")


def violations(msg: str) -> list[str]:
    """The bullet lines of a constraint-violation message (one per violated dim)."""
    body = msg.split("Suggested fixes:", 1)[0]
    items: list[str] = []
    for line in body.splitlines():
        m = _ITEM.match(line)
        if m:
            items.append(m.group(1).strip())
        elif items and line.startswith("    "):
            items[-1] += " " + line.strip()
    return items


def constraint_findings(msg: str, log: GuardLog, ctx: Context) -> list[Finding]:
    names = from_shape_env(log.shape_env, ctx.built.names)
    by_name: dict[str, set[sympy.Symbol]] = {}
    for sym, name in names.message.items():
        by_name.setdefault(name, set()).add(sym)
    out = []
    for item in violations(msg) or [_first_line(msg)]:
        out.append(_violation(item, by_name, names, log, ctx))
    return out


def _violation(item: str, by_name: dict[str, set[sympy.Symbol]], names: SymbolNames, log: GuardLog, ctx: Context) -> Finding:
    text = rename_sources(item, ctx.built.names)
    m = re.search(r"You marked (\w+) as dynamic but your code specialized it to be a constant \((\d+)\)", item)
    if m:
        dim, value = m.group(1), int(m.group(2))
        event = log.first(by_name.get(dim, set()), ("replace", "guard"))
        line = f": `{source_line(event.frame.filename, event.frame.line)}`" if event and event.frame else ""
        where = f" by line {event.frame.line}{line}" if event and event.frame else ""
        message = f"`{dim}` was declared dynamic but was specialized to {value}{where}"
        return _on(ctx, codes.SPECIALIZED, message, event, dim, detail=item)
    m = re.search(r"The values of (\w+) = \S+ and (\w+) = \S+ must always be equal", item)
    if m:
        a, b = m.group(1), m.group(2)
        event = log.first(by_name.get(a, set())) if not by_name.get(b) else _first_both(log, by_name.get(a, set()), by_name.get(b, set()))
        message = f"`{a}` and `{b}` are declared as independent dims, but this line needs them equal"
        return _on(ctx, codes.EQUALITY_VIOLATION, message, event, a, detail=item)
    m = re.search(r"The values of (\w+) = \S+ must always be related to the values of (\w+) = \S+ by (.+?)\.?$", item)
    if m:
        a, b, rel = m.group(1), m.group(2), m.group(3)
        event = _first_both(log, by_name.get(a, set()), by_name.get(b, set()))
        message = f"`{a}` is declared independent, but this line needs {rel}"
        return _on(ctx, codes.RELATION_VIOLATION, message, event, a, detail=item)
    m = re.search(r"Not all values of (\w+) = \S+ in the specified range(?: (.+?))? satisfy the generated guard (.+)$", item)
    if m:
        dim, declared, guard = m.group(1), m.group(2) or "unbounded", m.group(3)
        event = _cutting_guard(log, by_name.get(dim, set()), ctx, dim)
        need = names.say(event.expr) if event else rename_sources(guard, ctx.built.names)
        if event is not None:
            ctx.cut[dim] = event.expr.xreplace({s: sympy.Symbol(n) for s, n in names.message.items()})
        message = f"`{dim}` is declared as {_declared(dim, ctx, declared)}, but this line requires `{need}`"
        return _on(ctx, codes.RANGE_VIOLATION, message, event, dim, detail=item)
    return _on(ctx, codes.GUARD_VIOLATION, names.text(text), None, None, detail=item)


def _declared(dim: str, ctx: Context, fallback: str) -> str:
    root = ctx.built.names.roots.get(dim)
    if root is None:
        return fallback
    lo = root.min if isinstance(root.min, int) else 0
    hi = root.max if isinstance(root.max, int) and root.max < 2**62 else "∞"
    return f"[{lo}, {hi}]"


def _first_both(log: GuardLog, a: set, b: set) -> Any:
    for event in log.events:
        free = event.expr.free_symbols
        if event.frame and free & a and free & b:
            return event
    return log.first(a | b)


def _cutting_guard(log: GuardLog, symbols: set, ctx: Context, dim: str) -> Any:
    """The first guard that some value of the declared range breaks."""
    spec_dim = ctx.spec.dims.get(dim)
    root = ctx.built.names.roots.get(dim)
    lo = getattr(root, "min", None) if root is not None else (spec_dim.min if spec_dim else None)
    hi = getattr(root, "max", None) if root is not None else (spec_dim.max if spec_dim else None)
    env = log.shape_env
    hints = dict(getattr(env, "backed_var_to_val", None) or getattr(env, "var_to_val", {}) or {})
    probes = [v for v in (lo, hi, 0, 1, 2, 10**6) if isinstance(v, int) and v < 2**62]
    for event in log.events:
        if event.kind != "guard" or not event.frame or not (event.expr.free_symbols & symbols):
            continue
        for sym in event.expr.free_symbols & symbols:
            for value in probes:
                try:
                    if (lo is None or value >= lo) and (hi is None or value <= hi):
                        if event.expr.xreplace({**hints, sym: sympy.Integer(value)}) == sympy.false:
                            return event
                except (TypeError, AttributeError):
                    continue
    return log.first(symbols, ("guard",))


def _on(ctx: Context, code: codes.Code, message: str, event: Any, dim: str | None, detail: str) -> Finding:
    """A constraint finding: on the guard's line when known, else on the dim's spec line."""
    key = f"dims.{dim}" if dim and f"dims.{dim}" in ctx.spec.locations else None
    related = (ctx.spec_related(key),)
    if event is not None and event.frame is not None:
        return at(ctx, code, message, event.frame, related=related, detail=detail)
    loc = ctx.spec.where(key) if key else ctx.spec.location
    return codes.finding(
        code,
        message,
        loc.path,
        loc.line,
        column=loc.column,
        end_line=loc.end_line,
        end_column=loc.end_column,
        related=related,
        detail=detail,
    )


# -- draft export's failures ----------------------------------------------------------------


def explain_draft(failures: list[Any], ctx: Context) -> list[Finding]:
    from torch._logging.structured import INTERN_TABLE

    filenames = {i: name for name, i in INTERN_TABLE.items()}
    out = []
    for failure in failures:
        data = failure.data
        kind = getattr(failure.failure_type, "name", str(failure.failure_type))
        frame = None
        for entry in reversed(data.get("user_stack") or []):
            fname = filenames.get(entry.get("filename"), entry.get("filename"))
            if isinstance(fname, str) and fname in ctx.files:
                frame = Frame(fname, entry.get("line", 1), entry.get("name", ""))
                break
        if kind == "DATA_DEPENDENT_ERROR":
            symbols = {sym: var for var, syms in (data.get("frame_locals") or {}).get("locals", {}).items() for sym in syms}
            try:
                cond = sympy.sympify(
                    data.get("expr", ""),
                    locals={s: sympy.Symbol(s, integer=True) for s in re.findall(r"\b[su]\d+\b", data.get("expr", ""))},
                )
            except (sympy.SympifyError, SyntaxError, TypeError):
                continue
            out.append(data_dependent(cond, frame, None, ctx, symbols=symbols, detail=str(data.get("expr"))))
        elif kind in ("MISSING_FAKE_KERNEL", "MISMATCHED_FAKE_KERNEL"):
            code = codes.MISSING_FAKE_KERNEL if kind == "MISSING_FAKE_KERNEL" else codes.MISMATCHED_FAKE_KERNEL
            op = data.get("op", "a custom op")
            out.append(at(ctx, code, f"{op}: {code.title}; register one with torch.library.register_fake", frame, detail=str(data)[:2000]))
    return out
