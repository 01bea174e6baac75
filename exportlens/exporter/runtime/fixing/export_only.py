"""forward that runs eagerly but raises while exporting (EL305): the message, and a fix where
the line is one exportlens knows how to write in a form torch traces: a call of a memoized
function (memoized.py), Python's ``max``/``min`` iterating over a tensor, or a dict looked up by
a dynamic size (sized_lookups.py: a program per size), or ``is_causal=`` given a test of sizes."""

from __future__ import annotations

from ...core.report import Fix, Narrowing, Probe
from ...edit.builtin_reductions import as_reductions
from ...edit.causal_masks import causal_mask
from ...edit.text_edits import edit_between
from ..compat import messages as forms
from ..context import Context
from ..inputs import declared_probes
from ..reading.failures import Raised
from .memoized import memoized
from .sized_lookups import lookup_fix


def export_only(record: Raised, ctx: Context) -> tuple[str, tuple[Fix, ...]]:
    """The finding's message and its fixes (none where no rewrite is known)."""
    said = f"forward runs eagerly on the example inputs, but raised {record.error} while exporting: {record.text}"
    if record.frame is None:
        return said, ()
    path = ctx.sources.rel(record.frame.filename)
    text = ctx.read(path)
    found = (
        ctx.fix_or("a memoized call", lambda: memoized(record, path, text), None)
        or ctx.fix_or("a builtin reduction", lambda: builtin_reduction(record, path, text), None)
        or ctx.fix_or("a dict looked up by a size", lambda: lookup_fix(record, ctx), None)
    )
    found = found or ctx.fix_or("a computed is_causal", lambda: causal_fix(record, path, text, ctx), None)
    return (found[0], (found[1],)) if found else (said, ())


def builtin_reduction(record: Raised, path: str, text: str) -> tuple[str, Fix] | None:
    """``max(lengths)`` over a tensor: torch.export traces the builtin as ``torch.maximum`` of one
    argument, which raises; ``lengths.max()`` is the same value in one op."""
    if record.frame is None or record.error != "TypeError" or forms.ONE_ARGUMENT_MISSING not in record.text:
        return None
    if not record.text.startswith(forms.MAXIMUM_CALLED):
        return None
    found = as_reductions(text, record.frame.line)
    edit = edit_between(path, text, found.text) if found else None
    if found is None or edit is None:
        return None
    op = record.text.split("()", 1)[0]  # ``maximum`` or ``minimum``, as torch names the op it tried
    message = (
        f"`{found.written}` is Python's builtin over a tensor's elements, which torch.export traces as"
        f" `torch.{op}` of one argument and refuses ({record.error})"
    )
    title = f"Write `{found.rewritten}` for `{found.written}`: the same value, as one reduction torch traces"
    return message, Fix(title, (edit,), preferred=True, probes=(Probe("example inputs"),), rank=Narrowing.REWRITE)


def causal_fix(record: Raised, path: str, text: str, ctx: Context) -> tuple[str, Fix] | None:
    """``is_causal=`` given a test of sizes, which torch.export holds as a symbolic bool that the
    op refuses: the causal mask passed instead. Branch-free (always causal), so compared with
    eager on the example and the class's probe inputs, where the test takes each side."""
    if record.frame is None or forms.IS_CAUSAL_NOT_BOOL not in record.text:
        return None
    found = causal_mask(text, record.frame.line)
    edit = edit_between(path, text, found.text) if found else None
    if found is None or edit is None:
        return None
    message = (
        f"`{found.written}` is a test of sizes, which torch.export holds as a symbolic bool while exporting,"
        f" and `scaled_dot_product_attention` takes only a Python bool there ({record.error})"
    )
    title = (
        f"Pass `{found.rewritten}` for `{found.written}`: the causal mask as a tensor the program keeps"
        " (where the test is false, the mask must allow every key: the probes check it)"
    )
    probes = (Probe("example inputs"), *declared_probes(ctx.built))
    return message, Fix(title, (edit,), preferred=True, probes=probes, rank=Narrowing.BRANCH_FREE)
