"""An open pyproject.toml as the spec features read it: its module tables (``spec_text``)
and the conversion between LSP positions and offsets into its text (``pyproject``'s)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lsprotocol import types

from ...exporter.core.targets import ModuleClass, ParamKind, Target
from ...exporter.spec.pyproject import MODULES, PYPROJECT, VARIANTS, Pyproject, read
from ...exporter.spec.spec_text import DimUse, Scope, family, scan, scope_at
from ...exporter.spec.variants import merge
from ..snapshots import DocumentSnapshot


@dataclass(frozen=True)
class SpecDoc:
    doc: DocumentSnapshot

    @staticmethod
    def of(doc: DocumentSnapshot) -> SpecDoc | None:
        return SpecDoc(doc) if doc.path.name == PYPROJECT else None

    @cached_property
    def tree(self) -> Pyproject:
        return read(self.doc.text)

    @cached_property
    def scopes(self) -> list[Scope]:
        return scan(self.doc.text)

    def offset(self, position: types.Position) -> int:
        return self.tree.offset(position.line + 1, self.doc.lines.column(position) + 1)

    def position(self, offset: int) -> types.Position:
        return self.doc.lines.position(*self.tree.place(offset))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.position(start), self.position(end))

    def family_at(self, offset: int) -> list[Scope]:
        """The tables of the class whose table holds ``offset`` (its own and its variants')."""
        scope = scope_at(self.scopes, offset)
        return family(self.scopes, scope.key[0]) if scope else []

    @cached_property
    def raw(self) -> dict[str, Any]:
        """``[tool.exportlens.modules]`` as tomlkit reads it; {} where the text does not parse."""
        doc: Any = read(self.doc.text).doc or {}
        for key in MODULES:
            doc = doc.get(key, {}) if isinstance(doc, dict) else {}
        return doc if isinstance(doc, dict) else {}

    def declared(self, scope: Scope, name: str) -> dict[str, Any] | None:
        """The ``dims`` entry of ``name`` that applies in ``scope``: its table's as a variant
        merges it over its class's (``variants.merge``)."""
        table = self.raw.get(scope.key[0], {})
        table = table if isinstance(table, dict) else {}
        variants = table.get(VARIANTS)
        if scope.key[1] is not None and isinstance(variants, list):
            own = variants[scope.key[1]] if scope.key[1] < len(variants) else {}
            table = merge(table, own if isinstance(own, dict) else {})
        dims = table.get("dims", {})
        entry = dims.get(name) if isinstance(dims, dict) else None
        return entry if isinstance(entry, dict) else None


def reported(spec: SpecDoc, scope: Scope) -> list[Target]:
    """The targets the reports of ``scope``'s table are under: the class's, or, where it has
    variants, each variant's (``path.py:Class[name]``; in a variant's table, that one's)."""
    table, target = spec.raw.get(scope.key[0], {}), Target.parse(scope.key[0])  # the table's key: the user's text
    variants = table.get(VARIANTS) if isinstance(table, dict) else None
    if not isinstance(variants, list):
        return [target]
    if scope.key[1] is not None:
        variants = variants[scope.key[1] : scope.key[1] + 1]
    return [target.of_variant(v["name"]) for v in variants if isinstance(v, dict) and isinstance(v.get("name"), str)]


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


def signature(module: ModuleClass) -> str:
    """``forward(ids: Tensor, mask=None)``, as far as the index knows it."""
    if module.forward is None:
        return "forward(...)"
    prefix = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}
    params = [
        prefix.get(p.kind, "")
        + p.name
        + (f": {p.annotation}" if p.annotation else "")
        + ("=…" if p.has_default else "")
        for p in module.forward.params
    ]
    return f"forward({', '.join(params)})"
