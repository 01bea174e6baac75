"""Scan a workspace for nn.Module classes in a subprocess (no torch), streaming results.

``python -m exportlens.server.index.scanner FOLDER`` prints one JSON line per Python file
that defines a module or does not parse (``line_of``; ``entry_of`` reads it back): its path,
its project root, its modules and its syntax errors as the compact arrays the index cache
writes (find/compact.py), a tenth of the generic codec's cost to read for a tree of thousands
of modules, which the server reads while it serves.
Files are indexed by ``bulk.index_tree``: a text pre-filter, outlines without function
bodies made by several processes, and an on-disk cache, so a reopened folder is only stat'ed.

``python -m exportlens.server.index.scanner --one FILE`` scans one file whose text comes on
stdin (an open editor buffer too large to parse in the server: see ``rescans``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from ... import isolation
from ...exporter.core.sources import Sources, resolved
from ...exporter.core.targets import ModuleClass
from ...exporter.find import compact
from ...exporter.find.bulk import index_tree
from ...exporter.find.declared import declared_in, declaring
from ...exporter.find.index_cache import IndexCache, tree_stamp
from ...exporter.find.walk import python_files_under
from ...exporter.spec.loading import find_root, load_project
from ...exporter.spec.pyproject import excludes
from .module_index import FileEntry


def line_of(path: Path, entry: FileEntry) -> str:
    """One file's result, as a line of the scan's output (the editor's text never travels)."""
    modules = [compact.module_data(m) for m in entry.modules]
    findings = [compact.finding_data(f) for f in entry.findings]
    name = str(path)
    # a name that is not UTF-8 (its EL401) travels escaped, and comes back as the same path
    return compact.dumps((name, str(entry.root), modules, findings), ascii=not name.isascii()) + "\n"


def entry_of(line: str | bytes) -> tuple[Path, FileEntry]:
    """A line of the scan's output read back; ValueError for anything else."""
    return compact.loads(line, _entry)


def _entry(data: list) -> tuple[Path, FileEntry]:
    path, root, modules, findings = data
    entry = FileEntry(Path(root), tuple(map(compact.module_of, modules)), tuple(map(compact.finding_of, findings)))
    return Path(path), entry


def scan(
    folder: Path,
    files: Iterable[Path] | None = None,
    cache: IndexCache | None = None,
    saves: list[Callable[[], None]] | None = None,
) -> Iterator[tuple[Path, FileEntry]]:
    """Each module file's entry: all of ``folder``, or only ``files`` in it (its other files are
    still read where the scanned ones import them). Without a pyproject.toml above a file,
    its project is ``folder``. ``cache``: where sketches and outlines are kept between runs,
    written at once, or by the callables put in ``saves``."""
    folder = folder.resolve()
    roots: dict[Path, Path] = {}  # by a file's folder: the same for all its files
    by_root: dict[Path, list[Path]] = {}
    walked = python_files_under(folder, exclude=excludes()) if files is None else map(resolved, files)
    for f in sorted(walked):
        if f.parent not in roots:
            roots[f.parent] = find_root(f, [folder])
        by_root.setdefault(roots[f.parent], []).append(f)
    for root, paths in by_root.items():
        found = index_tree(root, paths, cache=cache)
        if saves is None:
            found.save()
        else:
            saves.append(found.save)
        _add_declared(root, found.modules, found.findings)
        for path in sorted({*found.modules, *found.findings}):
            yield path, FileEntry(root, tuple(found.modules.get(path, ())), tuple(found.findings.get(path, ())))


def _add_declared(root: Path, modules: dict[Path, list[ModuleClass]], findings: Mapping[Path, object]) -> None:
    """The modules the project's factory tables declare in its files (no class of their own)."""
    files = Sources.of(root)
    tables = load_project(files).tables
    for rel in declaring(tables):
        path = root / rel
        if path not in findings:
            modules[path] = [
                *modules.get(path, ()),
                *declared_in(rel, tables, (m.target for m in modules.get(path, ())), files),
            ]
            if not modules[path]:
                del modules[path]


def main() -> None:
    if sys.argv[1] == "--one":  # --one FILE [WORKSPACE_FOLDER ...]
        from .module_index import ModuleIndex

        path = Path(sys.argv[2])
        text = sys.stdin.buffer.read().decode("utf-8")
        entry = ModuleIndex(folders=[Path(f) for f in sys.argv[3:]]).compute(path, {path: text})
        sys.stdout.write(line_of(path, entry))
        return
    folder, cache = Path(sys.argv[1]).resolve(), IndexCache.default()
    files = sorted(python_files_under(folder, exclude=excludes()))  # the disk's: a folder is scanned as saved
    tree = tree_stamp(folder, files)
    answer = cache.answer(folder, tree)  # the folder as it was at the last scan: its output as it was
    if answer is not None:
        sys.stdout.write(answer)
        return
    lines: list[str] = []
    saves: list[Callable[[], None]] = []
    for path, entry in scan(folder, files, cache, saves):
        lines.append(line_of(path, entry))
        sys.stdout.write(lines[-1])
        sys.stdout.flush()
    sys.stdout.close()
    os.close(1)  # the answer is whole (end of file): the server goes on while the cache is written
    for save in saves:
        save()
    cache.keep_answer(folder, tree, "".join(lines))


async def scan_one(path: Path, text: str, folders: Iterable[Path] = ()) -> FileEntry | None:
    """``path``'s entry for ``text``, parsed in a subprocess: its memory goes back to the
    system when it exits. None if the scan failed. ``folders``: the workspace folders."""
    proc = await asyncio.create_subprocess_exec(
        *isolation.command(sys.executable, "exportlens.server.index.scanner", "--one", str(path), *map(str, folders)),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=isolation.environment(),
    )  # fmt: skip
    try:
        out, _ = await proc.communicate(text.encode("utf-8", "surrogatepass"))
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        raise
    try:
        return replace(entry_of(out)[1], text=text)
    except ValueError:
        return None


class Indexer:
    """Runs the scan subprocess for a folder; calls ``on_file(path, entry)`` per result."""

    def __init__(
        self, folder: Path, on_file: Callable[[Path, FileEntry], None], on_done: Callable[[int], None]
    ) -> None:
        # the server's own interpreter, never the `python` setting: indexing runs in untrusted
        # workspaces too, and a workspace must not choose what gets executed there (nor, by
        # being the current folder, what that interpreter imports: isolation)
        self.proc = subprocess.Popen(
            isolation.command(sys.executable, "exportlens.server.index.scanner", str(folder)),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=isolation.environment(),
        )
        self._thread = threading.Thread(
            target=self._read, args=(on_file, on_done), daemon=True, name="exportlens-indexer"
        )
        self._thread.start()

    def _read(self, on_file: Callable[[Path, FileEntry], None], on_done: Callable[[int], None]) -> None:
        assert self.proc.stdout is not None
        count = 0
        for line in self.proc.stdout:
            try:
                path, entry = entry_of(line)
            except ValueError:
                continue
            count += 1
            on_file(path, entry)
        on_done(count)  # the output is whole; the subprocess may still be writing its cache
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


if __name__ == "__main__":
    main()
