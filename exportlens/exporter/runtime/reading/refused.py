"""Which line made the exported program refuse a size (torch side).

A program exported under a shape guard (``batch*seq % 16 != 0``, met by the example
while tracing ``h.reshape(16, -1)``) checks it on every call, in a guard function of
its own that carries no stack. The guard was added while tracing a line of the user's,
and ``record_guards`` kept that line: the guard that the sizes where the program fails
make false is the one that refuses them, and its line is where the finding belongs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy

from ...edit.text_edits import edit_between
from ..context import Context
from ..locate import Frame, GuardLog
from ..naming.symbols import from_shape_env


@dataclass(frozen=True)
class Refusal:
    """A guard that sizes the declared ranges allow make false, where the export made it."""

    frame: Frame
    refused: str  # what the program refuses, in dim names: "batch*seq % 16 == 0"
    periodic: bool  # on how sizes divide: it recurs across any range (else a point or an edge)
    dims: tuple[str, ...] = ()  # the dim names it is over
    expr: Any = None  # what it refuses, a sympy relation over the dim names (None where one is derived)


def refusal(log: GuardLog | None, ctx: Context, sizes: dict[str, int]) -> Refusal | None:
    """The first located guard false at ``sizes`` (dim name -> size) of every root; None when
    none is (the program fails for another reason) or a symbol has no dim name."""
    if log is None or log.shape_env is None:
        return None
    names = from_shape_env(log.shape_env, ctx.built.names)
    values = {s: v for s, n in names.message.items() if (v := size_of(n, sizes)) is not None}
    for event in log.events:
        if event.kind != "guard" or event.frame is None or not event.expr.free_symbols:
            continue
        if not event.expr.free_symbols <= values.keys():
            continue
        try:
            holds = bool(event.expr.xreplace({s: sympy.Integer(v) for s, v in values.items()}))
        except (TypeError, ValueError):
            continue  # not decided by the sizes alone
        if not holds:
            periodic = any(type(a).__name__ in ("Mod", "PythonMod") for a in sympy.preorder_traversal(event.expr))
            over = tuple(sorted({names.message[s] for s in event.expr.free_symbols}))
            refused = _negated(event.expr)
            named = {s: sympy.Symbol(names.message[s]) for s in event.expr.free_symbols}
            plain = all(n.name.isidentifier() for n in named.values())
            return Refusal(event.frame, names.say(refused), periodic, over, refused.xreplace(named) if plain else None)
    return None


def size_of(name: str, sizes: dict[str, int]) -> int | None:
    """The size a dim name stands for: a root's, or a derived one's (``3*_K``) from its root."""
    if name in sizes:
        return sizes[name]
    try:
        value = sympy.sympify(name, locals={n: sympy.Symbol(n) for n in sizes}).xreplace(
            {sympy.Symbol(n): sympy.Integer(v) for n, v in sizes.items()}
        )
    except (sympy.SympifyError, SyntaxError, TypeError):
        return None
    return int(value) if value.is_Integer else None


def _negated(expr: Any) -> Any:
    """``Ne(a, 0)`` -> ``Eq(a, 0)``: the sizes refused, said plainly."""
    try:
        return sympy.simplify_logic(sympy.Not(expr)) if not isinstance(expr, sympy.Rel) else expr.negated
    except Exception:
        return sympy.Not(expr)


# `h.reshape(16, -1)`, `h.view(b, -1, 8)`: the receiver as written, and the call
_RESHAPE = re.compile(r"(?P<receiver>[\w\].)[]+?)\.(?P<call>reshape|view)\(")


def flattened(ctx: Context, refusal: Refusal) -> tuple[str, Any] | None:
    """The line's alternative: a shape change of a flat tensor, which torch decides with no
    guard on how the sizes divide (the same values in the same order): the call as
    rewritten, and the edit; None where the line has no ``.reshape(`` / ``.view(``."""
    path = ctx.sources.rel(refusal.frame.filename)
    text = ctx.read(path)
    lines = text.splitlines(keepends=True)
    if not 0 < refusal.frame.line <= len(lines):
        return None
    line = lines[refusal.frame.line - 1]
    m = _RESHAPE.search(line)
    if m is None or m["receiver"].endswith(".flatten()"):
        return None
    rewritten = f"{m['receiver']}.flatten().reshape("
    new_line = line[: m.start()] + rewritten + line[m.end() :]
    new = "".join(lines[: refusal.frame.line - 1]) + new_line + "".join(lines[refusal.frame.line :])
    edit = edit_between(path, text, new)
    return (f"{m['receiver']}.flatten().reshape(...)", edit) if edit else None
