"""Int inputs the exported program holds as constants (EL207, torch side).

A Python int that forward reads is traced as the example's number: the program then
refuses every other value, with no word at export time. Where the spec gives an int for
a parameter forward reads, the exported module says so, with the spec edit that keeps it
a variable (edit.int_inputs).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

from ...core import codes
from ...core.report import Finding, Fix
from ...edit.int_inputs import declare_dynamic
from ...edit.text_edits import edit_between
from ...spec.loading import SpecSource
from ..context import Context


def baked_ints(forward: Callable[..., object], ctx: Context) -> list[Finding]:
    """EL207 for each int of the spec's inputs that ``forward`` reads."""
    ints = {name: v for name, v in ctx.spec.inputs.items() if type(v) is int}
    read = _reads(forward, set(ints))
    out = []
    for name in (n for n in ints if n in read):
        value = ints[name]
        message = (
            f"`{name}` is baked into the exported program as {value}: it refuses every other value of `{name}`"
            " (torch.export keeps an int input a constant unless it is declared dynamic)"
        )
        where = ctx.spec.where(f"inputs.{name}")
        fixes = _fixes(name, value, ctx)  # (which would declare it a dim of that name)
        out.append(codes.finding_at(codes.BAKED_INT, message, where.path, where.span, fixes=fixes, dims=(name,)))
    return out


def _fixes(name: str, value: int, ctx: Context) -> tuple[Fix, ...]:
    spec = ctx.spec
    if spec.source is not SpecSource.PYPROJECT:
        return ()  # example_inputs(): its dynamic_shapes would mark it Dim.DYNAMIC; no edit written for code
    path = spec.location.path
    old = ctx.read(path)
    new = ctx.fix_or(f"int input {name}", lambda: declare_dynamic(old, spec.target, name, value), None)
    edit = edit_between(path, old, new) if new else None
    title = f'Declare `{name}` a dynamic int: `{name} = "int[{name}]"`' + (
        f", its example {value}" if value >= 2 else ""
    )
    return (Fix(title, (edit,), preferred=True),) if edit else ()


def _reads(forward: Callable[..., object], names: set[str]) -> set[str]:
    """Which of ``names`` forward's body reads (none, where its source cannot be read)."""
    if not names:
        return set()
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(forward)))
    except (OSError, TypeError, SyntaxError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names}
