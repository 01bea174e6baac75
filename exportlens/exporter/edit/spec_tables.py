"""Edits of a module's table in pyproject.toml that keep its layout (tomlkit; no torch): a dim's
bounds, a dim replaced by a size or an expression. Each takes the file's text and returns the
new text; ``text_edits.edit_between`` turns the pair into an Edit."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import tomlkit
from tomlkit.items import InlineTable, String, Table

from ..core.targets import Target
from ..spec.shapes import looks_like_shape, parse_shape


def _module_table(doc: tomlkit.TOMLDocument, target: str, inherit: tuple[str, ...] = ()) -> Any:
    """The table of ``target``; for a variant (``path.py:Class[name]``) its own, first given
    the class table's entries of ``inherit`` that it does not override, so that an edit of
    them changes this variant alone and keeps what it inherited."""
    t = Target.parse(target)
    modules = doc["tool"]["exportlens"]["modules"]
    if t.variant is None:
        return modules[target]
    base = modules[t.module]
    table = next(v for v in base["variants"] if v.get("name") == t.variant)
    for key in inherit:
        if isinstance(base.get(key), dict):
            merged = tomlkit.inline_table()
            merged.update({**base[key].unwrap(), **(table[key].unwrap() if key in table else {})})
            table[key] = merged
    return table


def edit_spec(text: str, target: str, change: Callable[[Any], None], inherit: tuple[str, ...] = ()) -> str:
    doc = tomlkit.parse(text)
    change(_module_table(doc, target, inherit))
    return tomlkit.dumps(doc)


def set_dim_bounds(text: str, target: str, name: str, **bounds: int | None) -> str:
    """``dims.<name>.min/max = ...`` (None removes a bound), keeping the table's style."""

    def change(table: Any) -> None:
        if "dims" not in table:
            table["dims"] = tomlkit.inline_table()
        dims = table["dims"]
        if name not in dims:
            dims[name] = tomlkit.inline_table()
        dim = dims[name]
        for key, value in bounds.items():
            if value is None:
                dim.pop(key, None)
            else:
                dim[key] = value
        example = dim.get("example")
        if example is not None and not ((dim.get("min") or 0) <= example <= dim.get("max", example)):
            dim.pop("example")

    return edit_spec(text, target, change, inherit=("dims",))


def substitute_dim(text: str, target: str, name: str, replacement: str) -> str:
    """Write ``replacement`` (a size, another dim, or ``dx + 1``) wherever shapes say ``name``,
    and drop ``name`` from the dims table: it is no longer a dim of its own."""

    def rewrite(shape: str) -> str:
        parse_shape(shape)  # only rewrite what parses
        head, _, body = shape.partition("[")
        parts = body.rsplit("]", 1)[0].split(",")
        return f"{head}[{','.join(substituted(p, name, replacement) for p in parts)}]"

    def walk(value: Any) -> None:
        items = (
            value.items()
            if isinstance(value, (dict, InlineTable, Table))
            else enumerate(value)
            if isinstance(value, list)
            else ()
        )
        for key, item in list(items):
            if isinstance(item, (str, String)) and looks_like_shape(str(item)):
                value[key] = rewrite(str(item))
            elif isinstance(item, (dict, InlineTable, Table, list)):
                walk(item)

    def change(table: Any) -> None:
        walk(table.get("inputs", {}))
        if "dims" in table and name in table["dims"]:
            kept = carried_bounds(table["dims"][name], replacement, table["dims"])
            del table["dims"][name]
            if kept is not None:  # name = 4*new: new gets name's range, in its own terms
                table["dims"][kept[0]] = kept[1]
            if not table["dims"]:
                del table["dims"]

    return tidied(text, edit_spec(text, target, change, inherit=("inputs", "dims")))


def tidied(old: str, new: str) -> str:
    """The lines an edit changed, in the file's style of inline tables: without the doubled
    space tomlkit leaves where it removed a table's first key (``{  seq = ...``), and, where
    the file writes ``{ min = 2 }``, a table tomlkit made (``{example = 7}``) spaced alike."""
    before, spaced = set(old.splitlines()), "} }" in old or "{ " in old

    def tidy(line: str) -> str:
        line = re.sub(r"\{ {2,}", "{ ", line)
        if spaced:
            line = re.sub(r"\{(?=[^\s}])", "{ ", line)
            line = re.sub(r"(?<=[^\s{])\}", " }", line)
        return line

    return "".join(line if line.rstrip("\n") in before else tidy(line) for line in new.splitlines(keepends=True))


def substituted(part: str, name: str, replacement: str) -> str:
    """One size of a shape string with ``name`` replaced; a size left with no name is
    written as the number it is (``2*h`` with h = 64: ``128``)."""
    if re.fullmatch(r"\s*\w+\s*", part):  # the dim alone: its replacement as it is
        return re.sub(rf"\b{re.escape(name)}\b", replacement, part)
    simple = re.fullmatch(r"\s*\w+\s*", replacement) is not None
    new = re.sub(rf"\b{re.escape(name)}\b", replacement if simple else f"({replacement})", part)
    import sympy  # (a shape holds no arithmetic of numbers, nor parentheses: ``2*_n - 2``)

    lead = new[: len(new) - len(new.lstrip())]
    if not re.search(r"[A-Za-z_]", new):
        return f"{lead}{int(sympy.sympify(new))}"
    if simple:
        return new
    return f"{lead}{_linear_size(sympy.expand(sympy.sympify(new.strip())))}"


def _linear_size(expr: Any) -> str:
    """``a*name + b`` as a shape writes it (``2*_n - 2``, ``_n + 1``, ``_n``)."""
    (sym,) = expr.free_symbols
    a, b = (int(c) for c in expr.as_poly(sym).all_coeffs())
    head = f"{a}*{sym}" if a != 1 else str(sym)
    return head if b == 0 else f"{head} {'+' if b > 0 else '-'} {abs(b)}"


LINEAR_SIZE = re.compile(r"^\s*(?:(\d+)\s*\*\s*)?([A-Za-z_]\w*)\s*(?:([+-])\s*(\d+))?\s*$")


def carried_bounds(old: Any, replacement: str, dims: Any) -> tuple[str, Any] | None:
    """For ``name = a*new + b`` with ``new`` a dim not yet declared: ``new``'s entry, with the
    bounds and example of ``name``'s that it implies (``batch <= 64``, ``batch = 4*nb``:
    ``nb <= 16``). None when there is nothing to carry."""
    m = LINEAR_SIZE.match(replacement)
    if m is None or m[2] in dims or not hasattr(old, "get"):
        return None
    a, new = int(m[1] or 1), m[2]
    b = (int(m[4]) if m[3] == "+" else -int(m[4])) if m[4] else 0
    bounds = {}
    if old.get("min") is not None:
        bounds["min"] = -((b - int(old["min"])) // a)  # the ceiling of (min - b) / a
    if old.get("max") is not None:
        bounds["max"] = (int(old["max"]) - b) // a
    example = old.get("example")
    if example is not None and (int(example) - b) % a == 0:
        bounds["example"] = (int(example) - b) // a
    if not bounds:
        return None
    # written as the tables users write: { max = 16 }
    return new, tomlkit.parse("x = { " + ", ".join(f"{k} = {v}" for k, v in bounds.items()) + " }")["x"]
