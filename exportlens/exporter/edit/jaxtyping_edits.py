"""Fixes of a spec read from jaxtyping annotations, as text edits (no torch).

jaxtyping has no way to write a dim's range, so a new min or max goes in the
module's pyproject table (added, beside the annotations, where it has none: a
table without ``inputs`` takes them from the annotations). A dim that becomes a
number or another dim's expression is rewritten in the annotations themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import tomlkit

from ..core.report import Edit
from ..core.sources import Sources
from ..spec.jaxtyping_spec import shape_literal
from ..spec.loading import PYPROJECT, ExportSpec
from .spec_tables import set_dim_bounds, substitute_dim, substituted
from .text_edits import edit_between

DimChange = tuple[str, dict[str, int], str]  # (dim, its new bounds, or the size/expression it becomes)


def annotation_edits(spec: ExportSpec, changes: Iterable[DimChange], sources: Sources) -> tuple[Edit, ...]:
    """The edits that make every change; () where one of them cannot be written."""
    code_path = spec.path
    code = new_code = sources.text(code_path)
    has_toml = sources.exists(PYPROJECT)
    toml = new_toml = sources.text(PYPROJECT) if has_toml else ""
    for dim, bounds, value in changes:
        if not value:  # a range: only pyproject.toml can say it
            if not has_toml:
                return ()
            new_toml = set_dim_bounds(_with_table(new_toml, spec.target), spec.target, dim, **bounds)
            continue
        rewritten = _rewrite_annotations(new_code, spec, dim, value)
        if rewritten is None:
            return ()
        new_code = rewritten
        if has_toml and _has_dim(new_toml, spec.target, dim):
            new_toml = substitute_dim(new_toml, spec.target, dim, value)  # its bounds go, or pass to the new root
    edits = (edit_between(code_path, code, new_code), edit_between(PYPROJECT, toml, new_toml))
    return tuple(e for e in edits if e is not None)


def _with_table(text: str, target: str) -> str:
    """pyproject.toml with a (maybe empty) ``[tool.exportlens.modules."target"]`` table."""
    doc = tomlkit.parse(text)
    tool = doc.setdefault("tool", tomlkit.table(is_super_table=True))
    section = tool.setdefault("exportlens", tomlkit.table(is_super_table=True))
    modules = section.setdefault("modules", tomlkit.table(is_super_table=True))
    if target in modules:
        return text
    modules[target] = tomlkit.table()
    return tomlkit.dumps(doc)


def _has_dim(text: str, target: str, dim: str) -> bool:
    table = tomlkit.parse(text).unwrap().get("tool", {}).get("exportlens", {}).get("modules", {}).get(target, {})
    return isinstance(table, dict) and isinstance(table.get("dims"), dict) and dim in table["dims"]


def _rewrite_annotations(code: str, spec: ExportSpec, dim: str, value: str) -> str | None:
    """``code`` with ``dim`` written as ``value`` in each of forward's annotations (last
    first, so that earlier offsets hold); None where an annotation using it cannot be edited."""
    starts = _line_starts(code)
    places = sorted(
        (loc.span for key, loc in spec.locations.items() if key.startswith("inputs.")), key=lambda s: (s.line, s.column)
    )
    for span in reversed(places):
        start, end = (
            _offset(starts, span.line, span.column),
            _offset(starts, span.end_line or span.line, span.end_column or 1),
        )
        literal = shape_literal(code[start:end])
        if literal is None or not re.search(rf"(?<![\w]){re.escape(dim)}(?![\w])", literal[0]):
            continue
        if literal[1] is None:
            return None
        body_start = start + literal[1]
        body = code[body_start : body_start + len(literal[0])]
        new_body = re.sub(r"\S+", lambda m: _token(m.group(), dim, value), body)
        code = code[:body_start] + new_body + code[body_start + len(body) :]
    return code


def _token(token: str, dim: str, value: str) -> str:
    """One axis with ``dim`` replaced, its jaxtyping prefix kept; no spaces, which would split it."""
    m = re.fullmatch(r"([#?]?)((?:\w+=)?)(.*)", token)
    assert m is not None
    prefix, label, size = m.groups()
    if not re.search(rf"(?<![\w]){re.escape(dim)}(?![\w])", size) or token.startswith(("_", "*")):
        return token
    return prefix + label + _compact(substituted(size, dim, value))


def _compact(size: str) -> str:
    """A size as jaxtyping and the spec read it, simplified and without spaces: ``(dx + 1)+1`` -> ``dx+2``."""
    import sympy  # only for a fix that writes a derived size

    try:
        names = {
            n: sympy.Symbol(n, integer=True) for n in re.findall(r"[A-Za-z_]\w*", size)
        }  # ``N`` is no sympy function here
        expr = sympy.expand(sympy.sympify(size, locals=names))
    except (sympy.SympifyError, SyntaxError, TypeError):
        return size.replace(" ", "")
    return str(expr).replace(" ", "")


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _offset(starts: list[int], line: int, column: int) -> int:
    return starts[min(line, len(starts)) - 1] + column - 1
