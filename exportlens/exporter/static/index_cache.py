"""The workspace index's on-disk cache: each file's sketch and outline, under its
modification time and size (no torch).

One file of entries per indexed root, and one of the last answer per scanned folder, in the user's cache folder (``$EXPORTLENS_INDEX_CACHE``, else
``$XDG_CACHE_HOME/exportlens/index``, else ``~/.cache/exportlens/index``): never in
the workspace, which may be read only (an installed package) and is not ours to write.
The entries are plain data in the codec every process boundary uses (``CODEC``); an
entry of another format, exportlens or Python is a miss, and a damaged file is an
empty cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.codec import Codec, CodecError
from ..core.report import Edit, Finding, Fix, Kind, Related, Severity
from ..core.targets import Forward, Param, Span
from .outline import BaseOutline, ClassOutline, FileOutline, Ref
from .prefilter import Sketch

log = logging.getLogger(__name__)

FORMAT = 1
Stamp = tuple[int, int]  # modification time (ns) and size: a file whose stamp is unchanged is not read again


@dataclass(frozen=True)
class Entry:
    stamp: Stamp
    sketch: Sketch | None  # None for a file only parsed because a base led through it
    outline: FileOutline | Finding | None  # None: never parsed (it cannot define a module)


CODEC = Codec(Entry, Sketch, FileOutline, ClassOutline, BaseOutline, Ref, Forward, Param, Span, Finding, Fix, Edit, Related, Kind, Severity)


def tree_stamp(folder: Path, files: Iterable[Path]) -> str:
    """A digest of the files' stamps and of their folders' (a file added or removed, a
    pyproject.toml that moves a project's root, changes a folder's)."""
    files = list(files)
    digest = hashlib.sha256()
    for path in sorted({folder, *files, *(f.parent for f in files)}):
        digest.update(f"{path}\0{stamp(path)}\n".encode())
    return digest.hexdigest()


def stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class IndexCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def default(cls) -> IndexCache:
        given = os.environ.get("EXPORTLENS_INDEX_CACHE")
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "exportlens" / "index"
        return cls(Path(given) if given else base)

    def load(self, root: Path) -> dict[Path, Entry]:
        try:
            with open(self._file(root), "rb") as f:
                if CODEC.loads(f.readline()) != {"version": _version(), "root": str(root)}:
                    return {}
                return {path: entry for path, entry in map(CODEC.loads, f)}
        except FileNotFoundError:
            pass
        except (OSError, CodecError, KeyError, TypeError, ValueError) as e:  # a damaged or foreign cache is no cache
            log.info("index cache for %s not used: %s", root, e)
        return {}

    def save(self, root: Path, entries: Mapping[Path, Entry]) -> None:
        """One line per file, so that neither writing nor reading holds it all as one string."""
        lines = (CODEC.dumps(item) + "\n" for item in [{"version": _version(), "root": str(root)}, *entries.items()])
        self._write(self._file(root), lines)

    def _write(self, file: Path, lines: Iterable[str]) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.writelines(lines)
            os.replace(tmp, file)  # readers see the old file or the new, whole
        except OSError as e:
            log.info("index cache %s not saved: %s", file, e)

    def get(self, key: str) -> str | None:
        """A whole scan's answer, kept under ``key``."""
        try:
            data = json.loads(self._answer(key).read_bytes())
            data["version"] = tuple(data["version"])
            return data["answer"] if data.get("version") == _version() and data.get("key") == key else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, answer: str) -> None:
        self._write(self._answer(key), [json.dumps({"version": list(_version()), "key": key, "answer": answer})])

    def _answer(self, key: str) -> Path:
        return self.folder / f"{hashlib.sha256(key.partition(':')[0].encode()).hexdigest()[:24]}.answer.json"

    def _file(self, root: Path) -> Path:
        return self.folder / f"{hashlib.sha256(str(root).encode()).hexdigest()[:24]}.jsonl"


@cache
def _version() -> tuple[int, str, str]:
    """What made the entries: a change to the code that sketches and outlines files is a miss."""
    here = Path(__file__).parent
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in _MAKERS)).hexdigest()
    return FORMAT, code, sys.version


_MAKERS = ("outline.py", "skeleton.py", "prefilter.py", "index_cache.py", "../core/targets.py", "../core/report.py")
