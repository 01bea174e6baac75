"""Renaming a dim in pyproject.toml: every shape string that names it and its ``dims`` key,
across the class's table and its variants' tables; nothing else in the file changes."""

from __future__ import annotations

import re

from lsprotocol import types

from ...exporter.spec.spec_text import DimUse, family, scan, use_at, uses
from ..snapshots import DocumentSnapshot
from .spec_where import SpecDoc

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a size in a shape string (shapes.py)
NOT_HERE = "only a dim name can be renamed here: one in a shape string (`f32[batch, 16]`) or a key of `dims`"


class RenameRefused(ValueError):
    """A rename that cannot be done, in a sentence the editor shows."""


def _found(doc: DocumentSnapshot, position: types.Position) -> tuple[SpecDoc, list, DimUse]:
    spec = SpecDoc.of(doc)
    if spec is None:
        raise RenameRefused(NOT_HERE)
    offset = spec.offset(position)
    tables = spec.family_at(offset)
    use = use_at(tables, offset)
    if use is None:
        raise RenameRefused(NOT_HERE)
    return spec, tables, use


def prepare(doc: DocumentSnapshot, position: types.Position) -> types.PrepareRenamePlaceholder:
    spec, _, use = _found(doc, position)
    return types.PrepareRenamePlaceholder(range=spec.range(use.start, use.end), placeholder=use.name)


def rename(doc: DocumentSnapshot, position: types.Position, new_name: str) -> types.WorkspaceEdit:
    spec, tables, use = _found(doc, position)
    target = tables[0].key[0]
    if not _NAME.fullmatch(new_name):
        raise RenameRefused(f"'{new_name}' is not a dim name: use letters, digits and '_', not starting with a digit")
    taken = {u.name for u in uses(tables)}
    if new_name != use.name and new_name in taken:
        raise RenameRefused(
            f"'{new_name}' is already a dim of {target}: renaming '{use.name}' to it would make them one dim"
        )
    mine = [u for u in uses(tables) if u.name == use.name]
    edits = [types.TextEdit(spec.range(u.start, u.end), new_name) for u in mine] if new_name != use.name else []
    _reread(doc.text, mine, target, use.name, new_name)
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(identifier, edits)])


def _reread(text: str, mine: list[DimUse], target: str, old: str, new: str) -> None:
    """Read the renamed text again: the new name must stand exactly where the old one stood."""
    for u in sorted(mine, key=lambda u: u.start, reverse=True):
        text = text[: u.start] + new + text[u.end :]
    after = uses(family(scan(text), target))
    if old != new and (sum(u.name == new for u in after) != len(mine) or any(u.name == old for u in after)):
        raise RenameRefused(f"could not rename '{old}' in {target} without changing anything else")
