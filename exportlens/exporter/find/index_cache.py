"""The workspace index's on-disk cache: each file's sketch and outline, under its
modification time and size (no torch).

One file of entries per indexed root, and one of the last answer per scanned folder. The
editor's are in the user's cache folder (``$EXPORTLENS_INDEX_CACHE``, else
``$XDG_CACHE_HOME/exportlens/index``, else ``~/.cache/exportlens/index``): never in
the workspace, which may be read only (an installed package) and is not ours to write.
``exportlens check`` keeps its own in ``.exportlens/cache/index`` of the project root,
beside its verdicts (``of_project``): a project checked is one the user asked us to
keep a cache in, and CI keeps it with the verdicts. A link anywhere from the root into that
folder means no cache (nothing read or written through it).
The entries are plain JSON arrays, one line per file (compact.py: the codec every
process boundary uses names each field, and decoding that would be most of a warm run); a
file of another format, exportlens or Python is a miss, and a damaged file is an empty
cache, as is anything but a regular file of a sane size in a cache file's place
(a link, a FIFO, a device: core/regular_files.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.regular_files import NotRegular, open_regular, plain_folders, read_regular
from ..core.report import Finding
from . import compact
from .outline import FileOutline
from .prefilter import Sketch
from .walk import PYPROJECT

log = logging.getLogger(__name__)

FORMAT = 3  # 2: compact arrays (compact.py); 3: their form derived from the records (core/rows.py)
MAX_FILE = 1 << 30  # bytes of one root's entries: about a million files' outlines
MAX_ANSWER = 256 << 20  # bytes of one scan's answer
Stamp = tuple[int, int]  # modification time (ns) and size: a file whose stamp is unchanged is not read again


@dataclass(frozen=True)
class Entry:
    stamp: Stamp
    sketch: Sketch | None  # None for a file only parsed because a base led through it
    outline: FileOutline | Finding | None = None  # None: never parsed (it cannot define a module)
    checked: bool = False  # its whole text was parsed (the CLI's): ``problem`` says how that went
    problem: Finding | None = None  # its syntax or encoding error, from a whole parse


def tree_stamp(folder: Path, files: Iterable[Path]) -> str:
    """A digest of the files' stamps, their folders' (a file added or removed changes a
    folder's) and the stamps of the pyproject.toml in each folder from ``folder`` down to
    them (edited in place it changes no folder's, and its tables declare modules). Worked
    on as text: a ``Path``'s parent, hash and order are Python code, ten times a string's."""
    names = set(map(str, files))
    folders = {str(folder)}
    for name in names:
        up = os.path.dirname(name)
        while up not in folders and up != os.path.dirname(up):  # up to ``folder``, or a folder seen already
            folders.add(up)
            up = os.path.dirname(up)
    digest = hashlib.sha256()
    for path in sorted({*names, *folders, *(os.path.join(p, PYPROJECT) for p in folders)}):
        digest.update(f"{path}\0{stamp(path)}\n".encode("utf-8", "surrogateescape"))  # a name's bytes as they are
    return digest.hexdigest()


def stamp(path: Path | str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class IndexCache:
    def __init__(self, folder: Path, *, inside: Path | None = None) -> None:
        self.folder = folder
        self.inside = inside  # a project root the folder is in: no link may lead from it to the folder

    @classmethod
    def of_project(cls, root: Path) -> IndexCache:
        """``exportlens check``'s cache of the project at ``root``."""
        return cls(root / FOLDER / "cache" / "index", inside=root)

    @classmethod
    def default(cls) -> IndexCache:
        given = os.environ.get("EXPORTLENS_INDEX_CACHE")
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "exportlens" / "index"
        return cls(Path(given) if given else base)

    def load(self, root: Path) -> dict[Path, Entry]:
        try:
            self._check_folder()
            with open_regular(self._file(root, "jsonl"), MAX_FILE, follow=False) as f:
                if compact.loads(f.readline(), tuple) != _header(root):
                    return {}
                return dict(compact.loads(line, _entry_of) for line in f)
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError, ValueError) as e:  # a damaged or foreign cache is no cache
            log.info("index cache for %s not used: %s", root, e)
        return {}

    def save(self, root: Path, entries: Mapping[Path, Entry]) -> None:
        """One line per file, so that neither writing nor reading holds it all as one string."""
        lines = (compact.dumps(_entry_data(path, e)) + "\n" for path, e in entries.items())
        self._write(self._file(root, "jsonl"), [compact.dumps(_header(root)) + "\n", *lines])

    def _write(self, file: Path, lines: Iterable[str]) -> None:
        import tempfile  # here: a check of an unchanged tree writes nothing

        try:
            self._make_folder()
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.writelines(lines)
            os.replace(tmp, file)  # readers see the old file or the new, whole
        except OSError as e:
            log.info("index cache %s not saved: %s", file, e)

    def prepare(self) -> None:
        """Make the folder now, if it can be made."""
        try:
            self._make_folder()
        except OSError as e:
            log.info("index cache %s not made: %s", self.folder, e)

    def _check_folder(self) -> None:
        if self.inside is not None and not plain_folders(self.inside, self.folder):
            raise NotRegular(f"{self.folder} is reached through a link, or is not a folder: not using it")

    def _make_folder(self) -> None:
        """The folder, made with a ``.gitignore`` where it makes ``.exportlens`` (as the verdicts' store
        does: workers/verdicts.py) and a ``CACHEDIR.TAG`` of its own, keeping it out of backups."""
        self._check_folder()
        if self.inside is not None and not (self.inside / FOLDER).exists():
            (self.inside / FOLDER).mkdir()
            _write_new(
                self.inside / FOLDER / ".gitignore",
                "# made by exportlens: nothing in here belongs in version control\n*\n",
            )
        if self.inside is not None and not self.folder.exists():
            self.folder.mkdir(parents=True)
            _write_new(self.folder / "CACHEDIR.TAG", _TAG)
        self.folder.mkdir(parents=True, exist_ok=True)

    def answer(self, folder: Path, tree: str) -> str | None:
        """A whole scan's answer for ``folder``, if it was made when the tree's stamp was ``tree``:
        a line that says so, with the answer's digest, then the answer as it was given. Checked
        whole against its digest, a damaged answer is a miss."""
        try:
            data = read_regular(self._file(folder, "answer.json"), MAX_ANSWER, follow=False)
            header, _, answer = data.partition(b"\n")
            if compact.loads(header, tuple) != (*_header(folder), tree, _digest(answer)):
                return None
            return answer.decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def keep_answer(self, folder: Path, tree: str, answer: str) -> None:
        header = compact.dumps((*_header(folder), tree, _digest(answer.encode("utf-8"))))
        self._write(self._file(folder, "answer.json"), [header + "\n", answer])

    def _file(self, path: Path, kind: str) -> Path:
        return self.folder / f"{hashlib.sha256(str(path).encode('utf-8', 'surrogateescape')).hexdigest()[:24]}.{kind}"


def _header(root: Path) -> tuple[object, ...]:
    """A cache file's first line: what made it, and for which root."""
    return (*_version(), str(root))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entry_data(path: Path, e: Entry) -> object:
    outline = compact.outline_data(e.outline)
    return (str(path), e.stamp, compact.sketch_data(e.sketch), outline, e.checked, compact.finding_data(e.problem))


def _entry_of(d: list) -> tuple[Path, Entry]:
    path, (mtime, size), sketch, outline, checked, problem = d
    problem = compact.maybe_finding(problem)
    return Path(path), Entry((mtime, size), compact.sketch_of(sketch), compact.outline_of(outline), checked, problem)


@cache
def _version() -> tuple[int, str, str]:
    """What made the entries: a change to the code that sketches and outlines files is a miss."""
    here = Path(__file__).parent
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in _MAKERS)).hexdigest()
    return FORMAT, code, sys.version


def _write_new(file: Path, text: str) -> None:
    """A file made now, in a folder made now: nothing already there is written through."""
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


FOLDER = ".exportlens"  # workers/verdicts.py's FOLDER: the project's own cache folder
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# exportlens's index cache: https://bford.info/cachedir/\n"
_MAKERS = (
    "outline.py",
    "skeleton.py",
    "prefilter.py",
    "syntax.py",
    "index_cache.py",
    "compact.py",
    "packages.py",
    "../core/targets.py",
    "../core/report.py",
    "../core/rows.py",
    "../core/codec.py",
)
