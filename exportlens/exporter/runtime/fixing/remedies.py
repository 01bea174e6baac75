"""The fixes of a data-dependent guard, ranked by how much of the model they keep (torch side).

0. the check or the value kept: ``if <tensor test>: raise`` and ``torch._assert`` as
   ``torch._assert_async`` (edit.async_checks, ``kept_check``), tried before the rest;
   where torch was asked for the value itself, the same number kept symbolic:
   ``int(lengths.max())`` as ``lengths.max().item()`` (edit.item_reads), and
   ``capacity = int(....item() * f)`` as ``torch.sym_int(...)`` (edit.numbers), which decide nothing;
1. branch-free: the test removed, where one side adds nothing (edit.remedies.without_branch),
   or a fast path that only assigns names dropped whole (edit.remedies.without_fast_path), or a
   loop over ``mask.nonzero()`` run over every index of the mask (edit.index_loops);
2. ``torch.where``, where a tensor test picks between two sides that assign the same names
   (edit.remedies.as_where);
3. ``torch.cond`` over both sides, where both give tensors (edit.remedies.as_cond);
4. ``torch._check`` of the side the example inputs take (fixes.torch_check_fixes): the exported
   program then rejects every input that takes the other side.

Each of these (of the last, the ``torch._check`` the example inputs satisfy) carries the
example inputs as a probe: the check adds the inputs that take the other side of each
branch (probes.py), and the owner's proof compares each fix with eager on them; the first
that agrees everywhere is the one preferred
(workers/fix_preference.py). A check the example inputs do not satisfy is never tried.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from ...core.report import Fix, Narrowing, Probe
from ...edit.async_checks import raise_as_assert, torch_assert_as_async
from ...edit.at_line import TensorTest, index, tensor_test
from ...edit.branch_rewrites import as_where, without_branch, without_fast_path
from ...edit.cond_branches import as_cond
from ...edit.index_loops import every_index
from ...edit.item_reads import int_as_item
from ...edit.numbers import Conversion, conversion, symbolic
from ...edit.python_edits import importing_torch
from ...edit.text_edits import edit_between
from ..context import Context
from ..naming.symbols import SYMBOL
from ..reading.failures import DataDependent
from .fixes import torch_check_fixes

EXAMPLE = Probe("example inputs")
# the titles' first words (words for a person; what a fix is, is its ``rank``, never read back from these)
BRANCH_FREE = "Drop "
PICK = "Pick "
KEEP_CHECK = "Check it when the program runs"
T = TypeVar("T")


class Rewrite(NamedTuple):
    """One rewrite of the line: its title, the file's new text, how much it narrows, and whether
    it keeps both sides as written (torch.where, torch.cond: the one to try first)."""

    title: str
    text: str
    rank: Narrowing = Narrowing.REWRITE
    both_sides: bool = False


def remedy_fixes(record: DataDependent, ctx: Context, checks: bool = True) -> tuple[Fix, ...]:
    """The branch's fixes, best first (without ``checks``, no ``torch._check``); the first is
    the one the owner tries first."""
    if record.frame is None:
        return ()
    path = ctx.sources.rel(record.frame.filename)
    text = ctx.read(path)
    rewrites = _rewrites(record, ctx, text, record.frame.line)
    made = [(r, edit) for r in rewrites if (edit := edit_between(path, text, r.text))]
    fixes = [Fix(r.title, (edit,), probes=(EXAMPLE,), rank=r.rank) for r, edit in made]
    assumed = (
        [replace(f, probes=(EXAMPLE,)) if f.preferred else f for f in torch_check_fixes(record, ctx)] if checks else []
    )
    ranked = [*fixes, *assumed]
    # the one to try first, should no proof choose (an unproven report): the torch.where or
    # torch.cond where there is one, which keeps both sides as written; a branch-free form
    # keeps them only where probes say so
    first = next((i for i, (r, _) in enumerate(made) if r.both_sides), 0)
    return tuple(replace(f, preferred=i == first and bool(f.probes)) for i, f in enumerate(ranked))


def _rewrites(record: DataDependent, ctx: Context, text: str, line: int) -> list[Rewrite]:
    """(title, new text) of each rewrite of the line, best first: an ``int()`` that asked for a
    value kept symbolic (``.item()``, ``torch.sym_int``); branch-free forms, then torch.where
    (both sides computed, the test picks), then torch.cond."""
    if (
        record.tensors and (read := _safely(int_as_item, text, line, record.tensors)) is not None
    ):  # (sym_int would say it again)
        return [
            Rewrite(f"Write `{read.item}` for `{read.written}`: the same number, read when the program runs", read.text)
        ]
    rewrites = _kept_symbolic(record, ctx, text)
    header = _header(text, line)
    if (fast := _safely(without_fast_path, text, line)) is not None:
        title = f"{BRANCH_FREE}the fast path `{header}`: the code after it computes the same without it"
        rewrites.append(Rewrite(title, fast, Narrowing.BRANCH_FREE))
    if (free := _safely(without_branch, text, line)) is not None:
        new, how = free
        title = {
            "drop": f"{BRANCH_FREE}`{header}`: the code after it handles that case",
            "early": f"{BRANCH_FREE}the early return under `{header}`: the code after it gives the same there",
        }.get(how, f"{BRANCH_FREE}the test `{header}`: its body always runs")
        rewrites.append(Rewrite(title, new, Narrowing.BRANCH_FREE))
    if (every := _safely(every_index, text, line)) is not None:
        title = (
            f"{BRANCH_FREE}`nonzero()`: loop over every index of `{every.mask}` (`{every.rewritten}`),"
            " whose length export knows; an index it leaves out must add nothing"
        )
        rewrites.append(Rewrite(title, every.text, Narrowing.BRANCH_FREE))
    test = _safely(tensor_test, text, line)
    if test is not None and test.keyword == "if" and (where := _safely(as_where, text, line)) is not None:
        new, names = where
        said = ", ".join(f"`{n}`" for n in names)
        title = f"{PICK}{said} with torch.where instead of `{header}`: both sides computed, the test chooses"
        rewrites.append(Rewrite(title, importing_torch(new), both_sides=True))
    if record.tensors and (cond := _safely(as_cond, text, line, record.tensors)) is not None:
        rewrites.append(
            Rewrite(f"Run both sides of `{header}` with torch.cond", importing_torch(cond), both_sides=True)
        )
    return rewrites


def kept_check(record: DataDependent, ctx: Context, written: TensorTest) -> Fix | None:
    """``if <tensor test>: raise ...`` or ``torch._assert(...)`` as ``torch._assert_async``: the
    same check, made by the exported program. Proven on probes (which eager runs through, so
    none fails the check) like any remedy, and tried first."""
    if record.frame is None:
        return None
    path = ctx.sources.rel(record.frame.filename)
    text = ctx.read(path)
    title = f"{KEEP_CHECK}: `torch._assert_async(...)`"
    if written.keyword == "torch._assert":
        new = _safely(torch_assert_as_async, text, record.frame.line)
        title += " in place of `torch._assert(...)`"
    elif written.keyword == "if" and (kept := _safely(raise_as_assert, text, record.frame.line)) is not None:
        new = kept.text
        title += f" in place of `raise {kept.error}`" + (
            "" if kept.error == "RuntimeError" else " (it raises RuntimeError)"
        )
    else:
        return None
    edit = edit_between(path, text, new) if new else None
    return Fix(title, (edit,), preferred=True, probes=(EXAMPLE,)) if edit else None


def _kept_symbolic(record: DataDependent, ctx: Context, text: str) -> list[Rewrite]:
    """``int(...)`` written ``torch.sym_int(...)`` where it asked for the value (title, new text)."""
    asked_for = asked(record, ctx)
    if asked_for is None or record.frame is None:
        return []
    tensor = asked_for.argument in record.tensors  # ``int(lengths.max())`` reads the tensor's value
    new = _safely(symbolic, text, record.frame.line, values(record), tensor)
    title = (
        f"Write `{asked_for.symbolic}(...)` in place of `{asked_for.builtin}(...)`:"
        " the same number, which export can trace"
    )
    return [Rewrite(title, new)] if new is not None else []


def values(record: DataDependent) -> list[str]:
    """The values torch's guard reads, as the user's code names them (never torch's own ``u0``)."""
    unbacked = sorted(
        (s for s in record.condition.free_symbols if str(s).startswith(("u", "zuf"))), key=str
    )  # ints, floats
    return [said for s in unbacked if not SYMBOL.fullmatch(said := record.names.say(s))]


def asked(record: DataDependent, ctx: Context) -> Conversion | None:
    """The ``int(...)`` or ``float(...)`` on the record's line that asked torch for its value
    (edit.numbers), where torch was asked for a number rather than a truth."""
    if not record.asks_number or record.frame is None:
        return None
    return _safely(conversion, ctx.read(ctx.sources.rel(record.frame.filename)), record.frame.line, values(record))


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
        comment = next(
            (t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT), None
        )
    except (tokenize.TokenError, SyntaxError):  # a header that goes on over lines: its first as it is
        return code.rstrip()
    return code[: comment.start[1]].rstrip() if comment else code.rstrip()
