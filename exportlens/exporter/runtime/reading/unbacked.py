"""Names for the values an exported program reads from tensor data (torch side).

torch calls each such value an unbacked symbol (``u0``, ``zuf0``) and keeps, on the
node that made it, which part of that node's value it is (``unbacked_bindings``:
the value itself, or a size of a tensor). The node's stack trace gives the user's
line; the value is named as the line writes it: the variable it is assigned to
(``n``, ``picked.shape[0]``), else the read itself (``k.item()``,
``sizes.tolist()[1]``).
"""

from __future__ import annotations

import re
from typing import Any

import sympy

from ...edit.at_line import item_operand
from ..context import Context
from ..locate import deepest_in_text

_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?(?<![=!<>])=(?!=)\s*(.+?)\s*$")
_TOLIST = re.compile(r"([\w.\[\]()]+?)\.tolist\(\)")


def unbacked_names(ep: Any, ctx: Context) -> dict[sympy.Symbol, sympy.Symbol]:
    """Each unbacked symbol of ``ep``'s graph -> a symbol named as the user's code writes the value."""
    defined: list[tuple[sympy.Symbol, Any, Any]] = []  # (symbol, key path, node), in graph order
    for node in ep.graph.nodes:
        for sym, path in (node.meta.get("unbacked_bindings") or {}).items():
            defined.append((sym, path, node))
    per_line: dict[tuple[str, int], list[sympy.Symbol]] = {}
    frames = {}
    for sym, _, node in defined:
        frame = deepest_in_text(ctx.sources, node.meta.get("stack_trace"))
        frames[sym] = frame
        if frame is not None:
            per_line.setdefault((frame.filename, frame.line), []).append(sym)
    out: dict[sympy.Symbol, sympy.Symbol] = {}
    for sym, path, node in defined:
        frame = frames[sym]
        name = ""
        if frame is not None:
            text = ctx.read(ctx.sources.rel(frame.filename))
            lines = text.splitlines()
            code = lines[frame.line - 1] if 0 < frame.line <= len(lines) else ""
            same = per_line[(frame.filename, frame.line)]
            name = value_name(text, frame.line, code, _axis(path), same.index(sym), len(same), _op(node))
        # a value no line names is still not torch's ``u0``: where it was read
        out[sym] = sympy.Symbol(name or (f"⟨value of line {frame.line}⟩" if frame else "⟨a value read from a tensor⟩"))
    return out


def _op(node: Any) -> str:
    """The op that made a node (``nonzero`` of ``aten.nonzero.default``)."""
    return str(getattr(node.target, "__name__", node.target)).split(".")[0]


def _axis(path: Any) -> int | None:
    """The axis of a ``.size(i)`` key path; None for the value itself (or anything else)."""
    keys = list(path or ())
    if len(keys) == 2 and getattr(keys[0], "name", None) == "size" and hasattr(keys[1], "idx"):
        return int(keys[1].idx)
    return None


def value_name(text: str, line: int, code: str, axis: int | None, index: int, count: int, op: str = "") -> str:
    """The name of the ``index``-th of ``count`` values read on ``line`` (``code``): a size
    (``axis``) of what the line assigns, or of the call of ``op`` on it (``torch.nonzero(x > 0)``),
    or the value read; "" where the line says nothing."""
    assigned = _ASSIGNED.match(code)
    target = assigned[1] if assigned and count == 1 else None
    if axis is not None:
        base = target or _call(code, op)
        return f"{base}.shape[{axis}]" if base else ""
    if count > 1:  # ``sizes.tolist()``: one value per element, in order
        listed = _TOLIST.search(code)
        base = f"{listed[1]}.tolist()" if listed else (target or "")
        return f"{base}[{index}]" if base else ""
    return target or item_operand(text, line) or ""


def _call(code: str, op: str) -> str:
    """The one call of ``op`` on the line as written, with its receiver (``torch.nonzero(x > 0)``,
    ``(x > 0).nonzero()``); "" for none or several."""
    if not op:
        return ""
    found = [m.start() for m in re.finditer(rf"\b{re.escape(op)}\(", code)]
    if len(found) != 1:
        return ""
    start, depth = found[0] + len(op), 0
    for end in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[end], 0)
        if depth == 0:
            break
    else:
        return ""
    head = re.search(r"(?:[\w.]+|\([^()]*\))\.$|[\w.]*$", code[: found[0]])
    return (head[0] if head else "") + code[found[0] : end + 1]
