"""Turn torch's symbols (``s77``, ``u0``) back into the user's names (torch side).

Two renderings: for messages, a Dim's name (``batch``); for code the user
pastes, an expression valid at that line (``x.shape[0]``, ``n``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import sympy
from sympy.printing.str import StrPrinter

from .inputs import Names

_SYMBOL = re.compile(r"\b([su]\d+)\b")
_SOURCE = re.compile(r"L\[[^\]]+\](?:\[[^\]]+\])*\.size\(\)\[\d+\]")


class _Printer(StrPrinter):
    """Python syntax for guards: ``n > 3``, ``x.shape[0] == 4``, ``a != 1``."""

    _ops = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

    def _print_Relational(self, expr: Any) -> str:
        op = {"Eq": "==", "Ne": "!="}.get(type(expr).__name__, expr.rel_op)
        return f"{self._print(expr.lhs)} {op} {self._print(expr.rhs)}"

    def _print_And(self, expr: Any) -> str:
        return " and ".join(self.parenthesize(a, 1) for a in expr.args)

    def _print_Or(self, expr: Any) -> str:
        return " or ".join(self.parenthesize(a, 1) for a in expr.args)

    def _print_Not(self, expr: Any) -> str:
        return f"not ({self._print(expr.args[0])})"

    def _print_FloorDiv(self, expr: Any) -> str:
        return f"{self.parenthesize(expr.args[0], 50)} // {self.parenthesize(expr.args[1], 50)}"

    def _print_PythonMod(self, expr: Any) -> str:
        return f"{self.parenthesize(expr.args[0], 50)} % {self.parenthesize(expr.args[1], 50)}"

    _print_Mod = _print_PythonMod


def pretty(expr: Any, names: dict[sympy.Symbol, str] | None = None) -> str:
    """Print ``expr`` with symbols replaced by names."""
    if names:
        expr = expr.xreplace({s: sympy.Symbol(n) for s, n in names.items()})
    return _Printer().doprint(expr)


@dataclass
class SymbolNames:
    """Symbol -> the user's name, in messages (``batch``) and in code (``x.shape[0]``)."""

    message: dict[sympy.Symbol, str] = field(default_factory=dict)
    code: dict[sympy.Symbol, str] = field(default_factory=dict)

    def say(self, expr: Any) -> str:
        return pretty(expr, self.message | {s: n for s, n in self.code.items() if s not in self.message})

    def write(self, expr: Any) -> str | None:
        """Code for ``expr``, or None when a symbol has no name valid in the user's code."""
        if any(s not in self.code for s in expr.free_symbols):
            return None
        return pretty(expr, self.code)

    def text(self, message: str) -> str:
        """Rename symbols and ``L['x'].size()[0]`` sources inside torch's own text."""
        by_name = {str(s): n for s, n in (self.code | self.message).items()}
        return _SYMBOL.sub(lambda m: by_name.get(m.group(1), m.group(1)), message)


def from_shape_env(shape_env: Any, names: Names) -> SymbolNames:
    """Backed symbols (``s77``) -> Dim names, through the sources torch recorded for them."""
    out = SymbolNames()
    if shape_env is None:
        return out
    for sym, sources in getattr(shape_env, "var_to_sources", {}).items():
        for source in sources:
            name = names.by_source.get(source.name)
            if name is not None:
                out.message.setdefault(sym, name)
    return out


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


def rename_sources(message: str, names: Names) -> str:
    return _SOURCE.sub(lambda m: names.by_source.get(m.group(0), m.group(0)), message)
