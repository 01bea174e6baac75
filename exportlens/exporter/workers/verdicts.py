"""Verdicts kept on disk between runs (owner side, no torch).

A second ``exportlens check`` of an unchanged project, or an editor reopened on it,
answers from here without importing torch. An entry is found under the job's cache key
(the module's import closure, its spec, the options: ``batch.job_for``) together with
``environment``: this exportlens, the interpreter, and every distribution installed for
it. Anything else that could change a verdict changes one of those, or is not cached
(saved artifacts, runs cut short by a limit: ``outcome``).

The store is ``.exportlens/cache/`` in the project root, as ruff and mypy keep theirs:
a ``.gitignore`` in a folder we create keeps it out of version control, and a
``CACHEDIR.TAG`` out of backups. A project folder we cannot write to is simply not
cached; a damaged entry is a miss. The folder is in the project, whose files are not
ours: a link anywhere in ``.exportlens/cache/verdicts`` means no cache at all (nothing
read, written or pruned through it), an entry is read only if it is a regular file of a
sane size (core/regular_files.py), and pruning removes only entries we wrote: our name, our
content.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from ... import isolation
from ..core.codec import CodecError
from ..core.regular_files import NotRegular, is_regular, plain_folders, read_regular
from ..core.report import ModuleReport
from .protocol import CODEC

log = logging.getLogger(__name__)

FOLDER = ".exportlens"
# of an entry; an entry of another format is a miss (4: a probe's fill a tagged enum, an older string one would
# decode as a plain string; 3: equalities as records; 2: a fix's action, ranges as records)
FORMAT = 4
MAX_ENTRIES = 2000  # per project: the oldest go first
MAX_ENTRY = 256 << 20  # bytes: a report with the printed program of a large model is megabytes
ENTRY = re.compile(r"[0-9a-f]{64}\.json")  # a cache key (a sha256) and our suffix: the names we write
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# exportlens's verdict cache: https://bford.info/cachedir/\n"
_PROBE = "import json, sys; print(json.dumps([sys.version, sys.path]))"


class Verdicts:
    """The verdict store of one project."""

    def __init__(self, root: Path | str) -> None:
        self.top = Path(root) / FOLDER
        self.folder = self.top / "cache" / "verdicts"

    def has(self, key: str) -> bool:
        return self._ours() and is_regular(self.folder / f"{key}.json")

    def get(self, key: str) -> ModuleReport | None:
        file = self.folder / f"{key}.json"
        try:
            if not self._ours():
                raise NotRegular(f"{self.folder} is reached through a link, or is not a folder")
            report = _parsed(read_regular(file, MAX_ENTRY, follow=False))
            if report is not None:
                os.utime(file, follow_symlinks=False)  # recently used: pruned last
                return report
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, CodecError, RecursionError) as e:
            log.info("ignoring the cached verdict %s: %s", file.name, e)
        return None

    def put(self, key: str, report: ModuleReport) -> None:
        try:
            if not ENTRY.fullmatch(f"{key}.json"):
                raise ValueError(f"{key!r} is not a cache key")
            self._make_folder()
            text = json.dumps({"format": FORMAT, "report": CODEC.plain(report)}, ensure_ascii=False)
            # written beside, then renamed: a reader never sees half an entry
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temp, self.folder / f"{key}.json")  # (a link there is replaced, not followed)
            self._prune()
        except (OSError, ValueError, CodecError) as e:
            log.info("not caching the verdict for %s: %s", report.target, e)

    def _ours(self) -> bool:
        """Whether the store's folders are plain folders (or not made yet): no link leads
        from the project into them."""
        return plain_folders(self.top.parent, self.folder)

    def _make_folder(self) -> None:
        if not self._ours():
            raise NotRegular(f"{self.folder} is reached through a link, or is not a folder: not using it")
        if not self.top.exists():
            self.top.mkdir()
            _write_new(self.top / ".gitignore", "# made by exportlens: nothing in here belongs in version control\n*\n")
        if not self.folder.exists():
            self.folder.mkdir(parents=True)
            _write_new(self.folder.parent / "CACHEDIR.TAG", _TAG)

    def _prune(self) -> None:
        """The oldest entries past ``MAX_ENTRIES`` go; only files we wrote are counted or
        removed: our names, as regular files, holding a verdict of ours."""
        entries = [e for e in os.scandir(self.folder) if ENTRY.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime)
        for entry in entries[: len(entries) - MAX_ENTRIES]:
            try:
                if _parsed(read_regular(Path(entry.path), MAX_ENTRY, follow=False)) is not None:
                    os.unlink(entry.path)
            except (OSError, ValueError, KeyError, TypeError, AttributeError, CodecError, RecursionError):
                continue  # not ours, or gone: left alone


def _parsed(data: bytes) -> ModuleReport | None:
    """An entry's verdict, where the bytes are an entry of ours of this format."""
    entry = json.loads(data)
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    report = CODEC.value(entry["report"])
    return report if isinstance(report, ModuleReport) else None


def _write_new(file: Path, text: str) -> None:
    """A file made now, in a folder made now: nothing already there is written through."""
    fd = os.open(
        file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o644
    )
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def environment(python: str) -> str:
    """A hash of what, beside the project's files, decides a verdict: this exportlens's
    own code, ``python``'s version, and the distributions installed on its path (a
    ``dist-info`` folder's name carries the version, its mtime a reinstall). "" when
    the interpreter cannot say: then nothing is kept on disk."""
    if python == sys.executable:
        version, path = sys.version, sys.path  # this interpreter: no need to start another
    else:
        try:
            probe = subprocess.run(
                isolation.code_command(python, _PROBE),
                env=isolation.environment(),
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            version, path = json.loads(probe.stdout)
        except (OSError, ValueError, subprocess.SubprocessError):
            return ""
    h = hashlib.sha256(_own_code().encode())
    h.update(f"\0{python}\0{version}".encode())
    for installed in filter(None, map(_installed, path)):
        h.update(b"\0" + installed.encode())
    return h.hexdigest()


@cache
def _own_code() -> str:
    """A hash of exportlens's source: a verdict of other code of ours is not ours to give."""
    package = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for file in sorted(package.rglob("*.py")):
        h.update(str(file.relative_to(package)).encode() + b"\0" + file.read_bytes())
    return h.hexdigest()


def _installed(entry: str) -> str:
    """The distributions in one ``sys.path`` entry, with when each was installed; "" for
    an entry that holds none (the script's own folder, which differs between the CLI and
    the server), or for the current folder, whose project files are in the key already."""
    if not entry:
        return ""
    try:
        found = [e for e in os.scandir(entry) if e.name.endswith((".dist-info", ".egg-info", ".egg-link", ".pth"))]
    except OSError:
        return ""
    installed = "".join(sorted(f"|{e.name}:{e.stat().st_mtime_ns}" for e in found))
    return entry + installed if installed else ""
