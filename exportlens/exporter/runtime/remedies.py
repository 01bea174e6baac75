"""The fixes of a data-dependent guard, ranked by how much of the model they keep (torch side).

1. where torch was asked for the value itself (``capacity = int(....item() * f)``), the same
   number kept symbolic: ``torch.sym_int(...)`` (static.numbers), which decides nothing;
2. branch-free: the test removed, where one side adds nothing (static.remedies.without_branch);
3. ``torch.cond`` over both sides, where both give tensors (static.remedies.as_cond);
4. ``torch._check`` of the side the example inputs take (fixes.check_fixes): the exported
   program then rejects every input that takes the other side.

Each of the first three carries the example inputs as a probe: the check adds the inputs
that take the other side of each branch (probes.py), and the owner's proof compares each
fix with eager on them; the first that agrees everywhere is the one preferred
(workers/probed.py). A check the example inputs do not satisfy is never tried.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from ..core.report import Fix, Probe
from ..static.edits import edit_between, importing_torch
from ..static.numbers import Conversion, conversion, symbolic
from ..static.remedies import as_cond, without_branch
from ..static.source import index
from .context import Context
from .failures import DataDependent
from .fixes import check_fixes
from .naming import SYMBOL

EXAMPLE = Probe("example inputs")
BRANCH_FREE = "Drop "  # how a branch-free form's title begins (probes.py checks it keeps eager's results)
T = TypeVar("T")


def remedy_fixes(record: DataDependent, ctx: Context, checks: bool = True) -> tuple[Fix, ...]:
    """The branch's fixes, best first (without ``checks``, no ``torch._check``); the first is
    the one the owner tries first."""
    if record.frame is None:
        return ()
    path = ctx.files.relative(record.frame.filename)
    text = ctx.read(path)
    rewrites = _kept_symbolic(record, ctx, text)
    header = _header(text, record.frame.line)
    if (free := _safely(without_branch, text, record.frame.line)) is not None:
        new, how = free
        title = (
            f"{BRANCH_FREE}`{header}`: the code after it handles that case"
            if how == "drop"
            else f"{BRANCH_FREE}the test `{header}`: its body always runs"
        )
        rewrites.append((title, new))
    if record.tensors and (cond := _safely(as_cond, text, record.frame.line, record.tensors)) is not None:
        rewrites.append((f"Run both sides of `{header}` with torch.cond", importing_torch(cond)))
    fixes = [Fix(title, (edit,), probes=(EXAMPLE,)) for title, new in rewrites if (edit := edit_between(path, text, new))]
    assumed = [replace(f, probes=(EXAMPLE,)) if f.preferred else f for f in check_fixes(record, ctx)] if checks else []
    ranked = [*fixes, *assumed]
    # the one to try first, should no proof choose (an unproven report): the torch.cond where there
    # is one, which keeps both sides as written; a branch-free form keeps them only where probes say so
    first = next((i for i, f in enumerate(ranked) if "torch.cond" in f.title), 0)
    return tuple(replace(f, preferred=i == first and bool(f.probes)) for i, f in enumerate(ranked))


def _kept_symbolic(record: DataDependent, ctx: Context, text: str) -> list[tuple[str, str]]:
    """``int(...)`` written ``torch.sym_int(...)`` where it asked for the value (title, new text)."""
    asked_for = asked(record, ctx)
    if asked_for is None or record.frame is None:
        return []
    tensor = asked_for.argument in record.tensors  # ``int(lengths.max())`` reads the tensor's value
    new = _safely(symbolic, text, record.frame.line, values(record), tensor)
    title = f"Write `{asked_for.symbolic}(...)` in place of `{asked_for.builtin}(...)`: the same number, which export can trace"
    return [(title, new)] if new is not None else []


def values(record: DataDependent) -> list[str]:
    """The values torch's guard reads, as the user's code names them (never torch's own ``u0``)."""
    unbacked = sorted((s for s in record.condition.free_symbols if str(s).startswith(("u", "zuf"))), key=str)  # ints, floats
    return [said for s in unbacked if not SYMBOL.fullmatch(said := record.names.say(s))]


def asked(record: DataDependent, ctx: Context) -> Conversion | None:
    """The ``int(...)`` or ``float(...)`` on the record's line that asked torch for its value
    (static.numbers), where torch was asked for a number rather than a truth."""
    if not record.asks_number or record.frame is None:
        return None
    return _safely(conversion, ctx.read(ctx.files.relative(record.frame.filename)), record.frame.line, values(record))


def _safely(rewrite: Callable[..., T], *args: Any) -> T | None:
    """A rewrite that fails on code we did not foresee is a fix not offered, never a finding lost."""
    try:
        return rewrite(*args)
    except Exception:
        return None


def _header(text: str, line: int) -> str:
    """``if routed > 0:`` as written (one line of it, without a comment that ends it)."""
    idx = index(text)
    stmt = idx.statement_at(line) if idx else None
    return _uncommented(stmt.code.splitlines()[0]) if stmt else f"line {line}"


def _uncommented(code: str) -> str:
    try:
        comment = next((t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT), None)
    except (tokenize.TokenError, SyntaxError):  # a header that goes on over lines: its first as it is
        return code.rstrip()
    return code[: comment.start[1]].rstrip() if comment else code.rstrip()
