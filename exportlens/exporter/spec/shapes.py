"""The shape-string grammar: ``f32[batch, 2*seq, 3, ?]`` (no torch).

A size is an integer (static), a name (a Dim; one name in two places means
equal sizes), a linear expression of one name (``seq + 1``, ``2*seq``), or
``?`` (Dim.AUTO). Dtypes use torch's own short names.

A derived size is the project's text, read by the server too: it is bounded before any
arithmetic (``10**10**10*batch`` would have sympy compute ten billion digits, 20,000
``1+`` terms recurse past the stack), and one past the bounds is ``SizeRefused`` (EL005).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

DTYPES: dict[str, str] = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "bool": "bool",
    "b8": "bool",
    "c64": "complex64",
    "c128": "complex128",
}
AUTO = "?"

_SHAPE = re.compile(r"^\s*([A-Za-z0-9_]+)\s*\[(.*)\]\s*$", re.S)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EXPR_CHARS = re.compile(r"^[A-Za-z0-9_\s+\-*]+$")
# a derived size is short (``2*seq + 1``): past these bounds it is refused before sympy sees it
MAX_DERIVED_TEXT = 64  # characters
MAX_DERIVED_NODES = 32  # names, numbers and operators
MAX_POWER_BITS = 64  # ``2**4``: a power of two numbers, its result at most this many bits
_SHOWN = 60  # characters of a refused text quoted in a message
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Pow)


class ShapeError(ValueError):
    """A malformed shape string; ``unknown_dtype`` tells the two codes apart."""

    def __init__(self, message: str, *, unknown_dtype: bool = False) -> None:
        super().__init__(message)
        self.unknown_dtype = unknown_dtype


class SizeRefused(ValueError):
    """A derived size past what exportlens computes (EL005, an invalid spec): not a
    ``ShapeError``, whose grammar it may well follow."""

    LIMITS = (
        f"exportlens computes a derived size of at most {MAX_DERIVED_TEXT} characters and {MAX_DERIVED_NODES}"
        f" names, numbers and operators, with powers only of two numbers (`2**4`) up to 2**{MAX_POWER_BITS}"
    )


@dataclass(frozen=True)
class Derived:
    """``coeff * root + offset``: the only derived dims torch accepts."""

    root: str
    coeff: int
    offset: int
    text: str

    def value(self, root_value: int) -> int:
        return self.coeff * root_value + self.offset

    def __str__(self) -> str:
        return self.text


Size = int | str | Derived  # str: a Dim name or AUTO


@dataclass(frozen=True)
class Shape:
    dtype: str  # the short name, "f32"
    sizes: tuple[Size, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Root Dim names used, in order of first appearance."""
        seen: dict[str, None] = {}
        for s in self.sizes:
            if isinstance(s, Derived):
                seen[s.root] = None
            elif isinstance(s, str) and s != AUTO:
                seen[s] = None
        return tuple(seen)

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(str(s) for s in self.sizes)}]"


_SHAPE_START = re.compile(r"^\s*[A-Za-z][A-Za-z0-9_]*\s*\[")


def looks_like_shape(text: str) -> bool:
    """Meant as a shape (``f32[...``), even one left unclosed: that is a mistake to report,
    not a string to pass to forward."""
    return bool(_SHAPE_START.match(text))


def parse_shape(text: str) -> Shape:
    m = _SHAPE.match(text)
    if not m:
        missing = "; the closing ] is missing" if "]" not in text else ""
        raise ShapeError(f"'{text}' is not a shape string like 'f32[batch, 3]'{missing}")
    dtype, body = m.group(1), m.group(2).strip()
    if dtype not in DTYPES:
        known = ", ".join(DTYPES)
        raise ShapeError(f"unknown dtype '{dtype}' in '{text}' (known: {known})", unknown_dtype=True)
    sizes = tuple(parse_size(part, text) for part in body.split(",")) if body else ()
    return Shape(dtype, sizes)


def shown(text: str) -> str:
    """``text`` as a message quotes it: cut short where it is long."""
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text)} characters)"


def parse_size(part: str, whole: str = "") -> Size:
    part = part.strip()
    where = f" in '{shown(whole)}'" if whole else ""
    if not part:
        raise ShapeError(f"empty size{where}")
    if part == AUTO:
        return AUTO
    if re.fullmatch(r"-?\d+", part):
        value = int(part)
        if value < 0:
            raise ShapeError(f"negative size {value}{where}")
        return value
    if _NAME.match(part):
        return part
    return _parse_derived(part, where)


def _parse_derived(part: str, where: str) -> Derived:
    bad = ShapeError(f"size '{shown(part)}'{where} must be an integer, a name, '?', or 'a*name + b'")
    if not _EXPR_CHARS.match(part):
        raise bad
    _bounded(part, where, bad)
    import sympy  # here: a slow import, and most specs name no derived size

    try:
        expr = sympy.sympify(part, locals={n: sympy.Symbol(n, integer=True) for n in re.findall(r"[A-Za-z_]\w*", part)})
    except (sympy.SympifyError, SyntaxError, TypeError):
        raise bad from None
    free = sorted(expr.free_symbols, key=str)
    if len(free) != 1:
        raise bad
    (sym,) = free
    poly = sympy.Poly(expr, sym)
    if poly.degree() != 1 or not all(c.is_integer for c in poly.all_coeffs()):
        raise bad
    coeff, offset = (int(c) for c in poly.all_coeffs())
    if coeff <= 0:
        raise bad
    return Derived(root=str(sym), coeff=coeff, offset=offset, text=part)


def _bounded(part: str, where: str, bad: ShapeError) -> None:
    """Raise ``SizeRefused`` where computing ``part`` could take without end; ``bad`` where
    it is no arithmetic of names and integers. Read with ``ast`` on a bounded text (no
    brackets pass ``_EXPR_CHARS``, so no nesting), before any number is computed."""
    refused = SizeRefused(
        f"size '{shown(part)}'{where} is a derived size exportlens does not compute: {SizeRefused.LIMITS}"
    )
    if len(part) > MAX_DERIVED_TEXT:
        raise refused
    try:
        tree = ast.parse(part, mode="eval").body
    except (SyntaxError, ValueError):
        raise bad from None
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.expr)]
    if len(nodes) > MAX_DERIVED_NODES:
        raise refused
    for node in nodes:
        if isinstance(node, ast.BinOp) and not isinstance(node.op, _OPERATORS):
            raise bad
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, (ast.UAdd, ast.USub)):
            raise bad
        if isinstance(node, ast.Constant) and type(node.value) is not int:
            raise bad
        if not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name)):
            raise bad
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and not _small_power(node):
            raise refused


def _small_power(node: ast.BinOp) -> bool:
    """``2**4``: an integer to an integer's power, its result of few bits; ``seq**2`` too
    (sympy then finds it is no derived size)."""
    base, exponent = node.left, node.right
    if not (isinstance(exponent, ast.Constant) and type(exponent.value) is int):
        return False
    if isinstance(base, ast.Name):
        return exponent.value <= MAX_POWER_BITS
    if not (isinstance(base, ast.Constant) and type(base.value) is int):
        return False
    return max(base.value.bit_length(), 1) * exponent.value <= MAX_POWER_BITS
