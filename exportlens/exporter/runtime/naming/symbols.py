"""Turn torch's symbols (``s77``, ``u0``) and sources (``L['x'].size()[0]``) back into the
user's names. Imports no torch: it works on sympy expressions and torch's text.

Two renderings: for messages, a Dim's name (``batch``); for code the user
pastes, an expression valid at that line (``x.shape[0]``, ``n``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy
from sympy.printing.str import StrPrinter

from ..compat.messages import AXIS, INFINITY, SOURCE, SYMBOL, VALUE_SOURCE
from ..compat.shape_env import shape_env_sources, source_name


class _Printer(StrPrinter):
    """Python syntax for guards: ``n > 3``, ``x.shape[0] == 4``, ``a != 1``."""

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

    def _print_floor(self, expr: Any) -> str:
        """``floor(n/2)``, as sympy reads torch's printed ``n//2``, is ``n // 2`` again."""
        num, den = sympy.fraction(sympy.together(expr.args[0]))
        if den == 1:
            return f"math.floor({self._print(expr.args[0])})"
        return f"{self.parenthesize(num, 50)} // {self.parenthesize(den, 50)}"

    # torch's own sympy functions, said as the Python that made them (``round(n / 2)``)
    def _print_IntTrueDiv(self, expr: Any) -> str:
        return f"{self.parenthesize(expr.args[0], 50)} / {self.parenthesize(expr.args[1], 50)}"

    _print_FloatTrueDiv = _print_IntTrueDiv
    _print_CleanDiv = _print_FloorDiv

    def _print_Function(self, expr: Any) -> str:
        name = type(expr).__name__
        python = _PYTHON_CALLS.get(name) or (
            f"math.{name.removeprefix('OpaqueUnaryFn_')}" if name.startswith("OpaqueUnaryFn_") else None
        )
        if python is None:
            return super()._print_Function(expr)
        return f"{python}({', '.join(self._print(a) for a in expr.args)})"

    _print_Max = _print_Min = _print_Function


_PYTHON_CALLS = {
    "RoundToInt": "round",
    "RoundDecimal": "round",
    "FloorToInt": "math.floor",
    "CeilToInt": "math.ceil",
    "TruncToInt": "int",
    "TruncToFloat": "math.trunc",
    "ToFloat": "float",
    "Max": "max",
    "Min": "min",
}


@dataclass
class Names:
    """The user's name for each dynamic axis, keyed by torch's source text (``L['x'].size()[0]``)."""

    by_source: dict[str, str] = field(default_factory=dict)  # "L['x'].size()[0]" -> "batch" / "seq + 1"
    by_input: dict[str, dict[int, str]] = field(default_factory=dict)  # "x" / "x[0]" / "x['a']" -> axis -> name
    roots: dict[str, Any] = field(default_factory=dict)  # dim name -> torch Dim object
    ints: dict[str, str] = field(default_factory=dict)  # int input ("start_pos") -> its dim name

    def add(self, path: str, source: str, axis: int, name: str) -> None:
        self.by_source[f"{source}.size()[{axis}]"] = name
        self.by_input.setdefault(path, {})[axis] = name

    def add_value(self, path: str, source: str, name: str) -> None:
        """An int input (``start_pos``) whose values are the dim ``name``: torch's source is
        the input itself (``L['start_pos']``)."""
        self.by_source[source] = name
        self.ints[path] = name


def pretty(expr: Any, names: dict[sympy.Symbol, str] | None = None) -> str:
    """Print ``expr`` with symbols replaced by names."""
    if names:
        expr = expr.xreplace({s: sympy.Symbol(atom(n)) for s, n in names.items()})
    return _Printer().doprint(expr)


def atom(name: str) -> str:
    """A name that stands for an expression (``n - 2``) in parentheses, so that what it is
    part of reads right (``(n - 2) % 2``); a name, ``x.shape[0]`` or ``k.item()`` as it is."""
    depth = 0
    for c in name:
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0 and c in " +-*/%<>=":
            return f"({name})"
    return name


@dataclass
class SymbolNames:
    """Symbol -> the user's name, in messages (``batch``) and in code (``x.shape[0]``)."""

    message: dict[sympy.Symbol, str] = field(default_factory=dict)
    code: dict[sympy.Symbol, str] = field(default_factory=dict)
    # an axis the spec left to torch (``?``): named as code (``x.shape[1]``) in torch's own text
    # only, never taken for a dim of the spec (no fix sets it, no finding is on it)
    described: dict[sympy.Symbol, str] = field(default_factory=dict)

    def say(self, expr: Any) -> str:
        return pretty(expr, self.message | {s: n for s, n in self.code.items() if s not in self.message})

    def write(self, expr: Any) -> str | None:
        """Code for ``expr``, or None when a symbol has no name valid in the user's code."""
        if any(s not in self.code for s in expr.free_symbols):
            return None
        return pretty(expr, self.code)

    def text(self, message: str) -> str:
        """Rename symbols (``s77``, ``u0``) inside torch's own text; sources are ``rename_sources``'s."""
        by_name = {str(s): atom(n) for s, n in (self.described | self.code | self.message).items()}
        return SYMBOL.sub(lambda m: by_name.get(m.group(1)) or unnamed(m.group(1)), message)


def unnamed(symbol: str) -> str:
    """A symbol of torch's that names nothing of the user's, said as what it is (never ``s52``)."""
    return "(a value read from a tensor)" if symbol.startswith("u") else "(a size torch derived)"


def from_shape_env(shape_env: Any, names: Names) -> SymbolNames:
    """Backed symbols (``s77``) -> Dim names, through the sources torch recorded for them."""
    out = SymbolNames()
    if shape_env is None:
        return out
    for sym, sources in shape_env_sources(shape_env).items():
        for source in sources:
            text = source_name(source) or ""
            name = names.by_source.get(text)
            if name is not None:
                out.message.setdefault(sym, name)
            elif (code := axis_as_code(text)) is not None:
                out.described.setdefault(sym, code)
    return out


def rename_sources(message: str, names: Names) -> str:
    """``L['x'].size()[0]`` in torch's text -> the user's name for that axis, where it has one."""
    said = SOURCE.sub(lambda m: atom(names.by_source.get(m.group(0)) or _as_code(m.group(0))), message)
    return INFINITY.sub("∞", said)


def axis_as_code(source: str) -> str | None:
    """An input's axis as the user's code reads it (``L['x'].size()[1]`` -> ``x.shape[1]``);
    None for any other source."""
    axis = AXIS.fullmatch(source)
    return f"{axis[1]}.shape[{axis[2]}]" if axis else None


def _as_code(source: str) -> str:
    """A source with no name in the spec, as the user's code says it: ``x.shape[1]``, ``n``."""
    if (code := axis_as_code(source)) is not None:
        return code
    value = VALUE_SOURCE.fullmatch(source)
    return value[1] if value else "(an input torch names by its own path)"
