"""What a handler hands to the features: immutable snapshots of the documents, taken
once per request, so that no feature reads the live workspace or the server. Files as the
user sees them are core's ``Sources`` (``WorkspaceSnapshot.sources``): a snapshot adds
what only the editor knows, each open document's version and the position encoding."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from types import MappingProxyType

from pygls.uris import to_fs_path

from ..exporter.core.sources import Resolved, Sources, read_text
from .positions import BOM, UTF16, Lines

NAME_MAX = 255  # bytes in one name: the limit of ext4, APFS, and (in UTF-16 units) NTFS
PATH_MAX = 4096  # bytes in a path, with its final NUL: Linux's


@dataclass(frozen=True)
class DocumentSnapshot:
    """One document as the handler saw it."""

    path: Path
    text: str = field(repr=False)
    version: int | None = None  # None: not open in the editor, the text is the disk's
    encoding: str = UTF16  # the position encoding negotiated with the client
    bom: bool = False  # the editor's text starts with a byte-order mark, which ``text`` leaves out

    @classmethod
    def of_buffer(cls, path: Path, text: str, version: int | None, encoding: str) -> DocumentSnapshot:
        """An editor's buffer: a byte-order mark kept at its start is no code (Python's and
        TOML's parsers reject it there), so it is left out, and counted back in positions."""
        bom = text.startswith(BOM)
        return cls(path, text[1:] if bom else text, version, encoding, bom)

    def __str__(self) -> str:
        return f"{self.path.name} v{self.version if self.version is not None else '(disk)'}"

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    @cached_property
    def lines(self) -> Lines:
        return Lines(self.text, self.encoding, bom=self.bom)


@dataclass(frozen=True)
class WorkspaceSnapshot:
    """Every document open in the editor at one moment; any other file as it is on disk."""

    documents: Mapping[Path, DocumentSnapshot] = field(default_factory=dict)
    encoding: str = UTF16

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", MappingProxyType(dict(self.documents)))

    def __contains__(self, path: Path) -> bool:
        return path in self.documents

    def get(self, path: Path) -> DocumentSnapshot:
        """The open document, or the file on disk ("" when it cannot be read)."""
        doc = self.documents.get(path)
        if doc is not None:
            return doc
        return DocumentSnapshot(path, read_text(path), None, self.encoding)

    def sources(self, root: Path) -> Sources:
        """Project ``root``'s files as the user sees them: the open documents over the disk."""
        return Sources.of(root, self.texts)

    @cached_property
    def texts(self) -> Mapping[Path, str]:
        """The editor's text of each open document: it overrides the disk's. Its paths are
        resolved already (``path_of``), which ``Sources.of`` need not do again."""
        return Resolved({p: d.text for p, d in self.documents.items()})

    @cached_property
    def versions(self) -> Mapping[Path, int]:
        """The version of each open document."""
        return MappingProxyType({p: d.version for p, d in self.documents.items() if d.version is not None})


@lru_cache(maxsize=4096)
def path_of(uri: str) -> Path | None:
    """The resolved file path of a ``file:`` URI; None for any other scheme, and for a path
    no file can have, which every call on it would refuse with an OSError or a ValueError:
    one with a NUL, a name over ``NAME_MAX`` bytes or a length over ``PATH_MAX``. Kept per
    URI: a snapshot of two hundred open documents would otherwise resolve each one every time."""
    fs = to_fs_path(uri)
    if not fs or "\0" in fs:
        return None
    path = Path(fs).resolve()
    if len(os.fsencode(path)) >= PATH_MAX or any(len(os.fsencode(name)) > NAME_MAX for name in path.parts):
        return None
    return path
