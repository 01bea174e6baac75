"""The workspace index's on-disk cache: each file's sketch and outline, under its
modification time and size (no torch).

One file of entries per indexed root, and one of the last answer per scanned folder, in
the user's cache folder (``$EXPORTLENS_INDEX_CACHE``, else
``$XDG_CACHE_HOME/exportlens/index``, else ``~/.cache/exportlens/index``): never in
the workspace, which may be read only (an installed package) and is not ours to write.
The entries are plain data in the codec every process boundary uses (``CODEC``); an
entry of another format, exportlens or Python is a miss, and a damaged file is an
empty cache, as is anything but a regular file of a sane size in a cache file's place
(a link, a FIFO, a device: core/regular_files.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.codec import Codec, CodecError
from ..core.regular_files import open_regular, read_regular
from ..core.report import Edit, Finding, Fix, Kind, Related, Severity
from ..core.targets import Forward, Param, Span
from .outline import BaseOutline, ClassOutline, FileOutline, Ref
from .prefilter import Sketch
from .walk import PYPROJECT

log = logging.getLogger(__name__)

FORMAT = 1
MAX_FILE = 1 << 30  # bytes of one root's entries: about a million files' outlines
MAX_ANSWER = 256 << 20  # bytes of one scan's answer
Stamp = tuple[int, int]  # modification time (ns) and size: a file whose stamp is unchanged is not read again


@dataclass(frozen=True)
class Entry:
    stamp: Stamp
    sketch: Sketch | None  # None for a file only parsed because a base led through it
    outline: FileOutline | Finding | None  # None: never parsed (it cannot define a module)


CODEC = Codec(Entry, Sketch, FileOutline, ClassOutline, BaseOutline, Ref, Forward, Param, Span, Finding, Fix, Edit, Related, Kind, Severity)


def tree_stamp(folder: Path, files: Iterable[Path]) -> str:
    """A digest of the files' stamps, their folders' (a file added or removed changes a
    folder's) and the stamps of the pyproject.toml in each folder from ``folder`` down to
    them (edited in place it changes no folder's, and its tables declare modules)."""
    files = list(files)
    folders = {folder}
    for f in files:
        up = f.parent
        while up not in folders and up != up.parent:  # up to ``folder``, or a folder seen already
            folders.add(up)
            up = up.parent
    digest = hashlib.sha256()
    for path in sorted({*files, *folders, *(p / PYPROJECT for p in folders)}):
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
            with open_regular(self._file(root, "jsonl"), MAX_FILE, follow=False) as f:
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
        self._write(self._file(root, "jsonl"), lines)

    def _write(self, file: Path, lines: Iterable[str]) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.writelines(lines)
            os.replace(tmp, file)  # readers see the old file or the new, whole
        except OSError as e:
            log.info("index cache %s not saved: %s", file, e)

    def answer(self, folder: Path, tree: str) -> str | None:
        """A whole scan's answer for ``folder``, if it was made when the tree's stamp was ``tree``."""
        try:
            data = CODEC.loads(read_regular(self._file(folder, "answer.json"), MAX_ANSWER, follow=False))
            return data["answer"] if (data["version"], data["tree"]) == (_version(), tree) else None
        except (OSError, CodecError, KeyError, TypeError):
            return None

    def keep_answer(self, folder: Path, tree: str, answer: str) -> None:
        data = {"version": _version(), "tree": tree, "answer": answer}
        self._write(self._file(folder, "answer.json"), [CODEC.dumps(data)])

    def _file(self, path: Path, kind: str) -> Path:
        return self.folder / f"{hashlib.sha256(str(path).encode()).hexdigest()[:24]}.{kind}"


@cache
def _version() -> tuple[int, str, str]:
    """What made the entries: a change to the code that sketches and outlines files is a miss."""
    here = Path(__file__).parent
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in _MAKERS)).hexdigest()
    return FORMAT, code, sys.version


_MAKERS = ("outline.py", "skeleton.py", "prefilter.py", "index_cache.py", "../core/targets.py", "../core/report.py")
