"""A diagnostic's fixes, carried in its ``data``: a code action reads them back from the
request's diagnostic rather than finding the finding again. With them goes what the edits
were made for: the version of each document the export read open, and a digest of each
file it read from disk (a file changed since leaves the fix out, as no version can say so)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...exporter.core.codec import Codec, CodecError
from ...exporter.core.report import Fix
from ...exporter.core.sources import relative
from ..session import Result
from ..snapshots import WorkspaceSnapshot

WIRE = Codec(Fix)  # a fix and every record its fields reach (core/codec.py)
FIXES, VERSIONS, DISK = "fixes", "versions", "disk"


def carried(fixes: tuple[Fix, ...], result: Result | None, root: Path) -> dict[str, Any]:
    """What a diagnostic's ``data`` holds of its finding's fixes (plain JSON)."""
    paths = {root / e.path for fix in fixes for e in fix.edits}
    versions: dict[str, int | None] = {}
    disk: dict[str, str] = {}
    for path in sorted(paths):
        rel = relative(root, path)
        if result is not None and path in result.versions:
            versions[rel] = result.versions[path]
        elif result is not None and path in result.disk:
            disk[rel] = _digest(result.disk[path])
    return {FIXES: [WIRE.plain(f) for f in fixes], VERSIONS: versions, DISK: disk}


def fixes_of(data: Any) -> tuple[Fix, ...] | None:
    """The fixes a diagnostic carries; None where its data holds none we can read (a client
    that strips ``data``, or a server of another version): the caller finds them again."""
    if not isinstance(data, dict) or not isinstance(data.get(FIXES), list):
        return None
    try:
        fixes = tuple(WIRE.value(f) for f in data[FIXES])
    except CodecError:
        return None
    return fixes if all(isinstance(f, Fix) for f in fixes) else None


def versions_for(data: object, fix: Fix, root: Path, docs: WorkspaceSnapshot) -> dict[Path, int | None] | None:
    """The version of each document ``fix``'s edits were made for, from what a diagnostic
    carries (``carried``: any JSON the client sent back): the one the export read where the
    document was open then; the editor's now where the export read the disk and the text is
    the same. None where a file the export read from disk changed since (no version can say
    so: the fix is left out until the next export)."""
    sent = data if isinstance(data, dict) else {}
    versions = v if isinstance(v := sent.get(VERSIONS), dict) else {}
    disk = d if isinstance(d := sent.get(DISK), dict) else {}
    out: dict[Path, int | None] = {}
    for rel in dict.fromkeys(e.path for e in fix.edits):
        path, version = root / rel, versions.get(rel)
        if type(version) is int:
            out[path] = version
        elif rel in disk and _digest(docs.get(path).text) != disk[rel]:
            return None
        else:
            out[path] = docs.get(path).version  # found in the text as it is now, or as the export read it
    return out


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
