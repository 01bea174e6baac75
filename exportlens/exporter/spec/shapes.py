"""The shape-string grammar: ``f32[batch, 2*seq, 3, ?]`` (no torch).

A size is an integer (static), a name (a Dim; one name in two places means
equal sizes), a linear expression of one name (``seq + 1``, ``2*seq``), or
``?`` (Dim.AUTO). Dtypes use torch's own short names.
"""

from __future__ import annotations

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


class ShapeError(ValueError):
    """A malformed shape string; ``unknown_dtype`` tells the two codes apart."""

    def __init__(self, message: str, *, unknown_dtype: bool = False) -> None:
        super().__init__(message)
        self.unknown_dtype = unknown_dtype


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


def parse_size(part: str, whole: str = "") -> Size:
    part = part.strip()
    where = f" in '{whole}'" if whole else ""
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
    bad = ShapeError(f"size '{part}'{where} must be an integer, a name, '?', or 'a*name + b'")
    if not _EXPR_CHARS.match(part):
        raise bad
    import sympy  # here: 0.4 s to import, and most specs name no derived size

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
