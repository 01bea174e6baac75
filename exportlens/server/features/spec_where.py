"""An open pyproject.toml as the spec features read it: its module tables (``spec_text``)
and the conversion between LSP positions and offsets into its text."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import tomlkit.exceptions
from lsprotocol import types

from ...exporter.core.targets import ModuleClass
from ...exporter.spec import toml_text
from ...exporter.spec.loading import PYPROJECT
from ...exporter.spec.spec_text import MODULES, VARIANTS, DimUse, Scope, family, scan, scope_at
from ..snapshots import DocumentSnapshot


@dataclass(frozen=True)
class SpecDoc:
    doc: DocumentSnapshot
    _starts: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        for line in self.doc.text.splitlines(keepends=True):  # the lines Lines counts
            starts.append(starts[-1] + len(line))
        object.__setattr__(self, "_starts", starts)

    @staticmethod
    def of(doc: DocumentSnapshot) -> SpecDoc | None:
        return SpecDoc(doc) if doc.path.name == PYPROJECT else None

    @cached_property
    def scopes(self) -> list[Scope]:
        return scan(self.doc.text)

    def offset(self, position: types.Position) -> int:
        line = min(position.line, len(self._starts) - 1)
        return min(self._starts[line] + self.doc.lines.column(position), len(self.doc.text))

    def position(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self._starts, offset) - 1
        return self.doc.lines.position(line + 1, offset - self._starts[line] + 1)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.position(start), self.position(end))

    def family_at(self, offset: int) -> list[Scope]:
        """The tables of the class whose table holds ``offset`` (its own and its variants')."""
        scope = scope_at(self.scopes, offset)
        return family(self.scopes, scope.key[0]) if scope else []

    @cached_property
    def raw(self) -> dict[str, Any]:
        """``[tool.exportlens.modules]`` as tomlkit reads it; {} where the text does not parse."""
        try:
            doc = toml_text.parse(self.doc.text).unwrap()
        except tomlkit.exceptions.ParseError:
            return {}
        for key in MODULES:
            doc = doc.get(key, {}) if isinstance(doc, dict) else {}
        return doc if isinstance(doc, dict) else {}

    def declared(self, scope: Scope, name: str) -> dict[str, Any] | None:
        """The ``dims`` entry of ``name`` that applies in ``scope`` (a variant's own, else its class's)."""
        table = self.raw.get(scope.key[0], {})
        tables = [table]
        if scope.key[1] is not None and isinstance(table, dict) and isinstance(table.get(VARIANTS), list):
            variants = table[VARIANTS]
            tables.insert(0, variants[scope.key[1]] if scope.key[1] < len(variants) else {})
        for t in tables:
            dims = t.get("dims", {}) if isinstance(t, dict) else {}
            if isinstance(dims, dict) and isinstance(dims.get(name), dict):
                return dims[name]
        return None


def reported(spec: SpecDoc, scope: Scope) -> list[str]:
    """The targets the reports of ``scope``'s table are under: the class's, or, where it has
    variants, each variant's (``path.py:Class[name]``; in a variant's table, that one's)."""
    table = spec.raw.get(scope.key[0], {})
    variants = table.get(VARIANTS) if isinstance(table, dict) else None
    if not isinstance(variants, list):
        return [scope.key[0]]
    if scope.key[1] is not None:
        variants = variants[scope.key[1] : scope.key[1] + 1]
    return [f"{scope.key[0]}[{v['name']}]" for v in variants if isinstance(v, dict) and isinstance(v.get("name"), str)]


def where_used(uses: list[DimUse]) -> str:
    """``ids` axis 1, `mask` axis 1 (as `seq + 1`)``."""
    parts = []
    for u in uses:
        if u.input is not None:
            size = f" (as `{u.size}`)" if u.size != u.name else ""
            parts.append(f"`{u.input}` axis {u.axis}{size}")
    return ", ".join(dict.fromkeys(parts)) or "no input shape"


def bounds(table: dict[str, Any] | None) -> str | None:
    """``2 <= seq <= 512``-style text of a dims entry, without the name; None where it sets none."""
    if not table:
        return None
    lo, hi, ex = table.get("min"), table.get("max"), table.get("example")
    text = (
        f"[{lo if lo is not None else 0}, {hi if hi is not None else '∞'}]" if lo is not None or hi is not None else ""
    )
    return (text + (f", example {ex}" if ex is not None else "")).strip(", ") or None


def mentions(message: str, name: str) -> bool:
    """Whether a finding's message names dim ``name`` inside its backquoted code."""
    return any(re.search(rf"\b{re.escape(name)}\b", code) for code in re.findall(r"`([^`]*)`", message))


def signature(module: ModuleClass) -> str:
    """``forward(ids: Tensor, mask=None)``, as far as the index knows it."""
    if module.forward is None:
        return "forward(...)"
    prefix = {"var_positional": "*", "var_keyword": "**"}
    params = [
        prefix.get(p.kind, "")
        + p.name
        + (f": {p.annotation}" if p.annotation else "")
        + ("=…" if p.has_default else "")
        for p in module.forward.params
    ]
    return f"forward({', '.join(params)})"
