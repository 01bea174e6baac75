"""Scan a workspace for nn.Module classes in a subprocess (no torch), streaming results.

``python -m exportlens.server.indexer FOLDER`` prints one JSON line per Python file
that defines a module or does not parse: ``{"path", "entry": FileEntry}`` in the
codec every process boundary uses (core.codec).
Files are scanned in small batches, so memory stays flat however large the folder.

``python -m exportlens.server.indexer --one FILE`` scans one file whose text comes on
stdin (an open editor buffer too large to parse in the server: see ``rescans``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from ..exporter.core.codec import Codec, CodecError
from ..exporter.core.report import Edit, Finding, Fix, Kind, Related, Severity
from ..exporter.core.targets import Forward, ModuleClass, Param, Span
from ..exporter.static.discover import discover_batches, python_files_under
from ..exporter.static.spec import find_root
from .index import FileEntry

BATCH = 32
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # so the subprocess imports this exportlens
CODEC = Codec(FileEntry, ModuleClass, Forward, Param, Span, Finding, Fix, Edit, Related, Kind, Severity)


def scan(folder: Path, files: Iterable[Path] | None = None) -> Iterator[tuple[Path, FileEntry]]:
    """Each file's entry: all of ``folder``, or only ``files`` in it (its other files are
    still read where the scanned ones import them). Without a pyproject.toml above a file,
    its project is ``folder``."""
    folder = folder.resolve()
    roots: dict[Path, Path] = {}  # by a file's folder: the same for all its files
    by_root: dict[Path, list[Path]] = {}
    for f in sorted(python_files_under(folder) if files is None else (p.resolve() for p in files)):
        if f.parent not in roots:
            roots[f.parent] = find_root(f, [folder])
        by_root.setdefault(roots[f.parent], []).append(f)
    for root, paths in by_root.items():
        for found in discover_batches(root, (paths[i : i + BATCH] for i in range(0, len(paths), BATCH))):
            per_file: dict[str, tuple[list[ModuleClass], list[Finding]]] = {}
            for m in found.modules:
                per_file.setdefault(m.path, ([], []))[0].append(m)
            for f in found.findings:
                per_file.setdefault(f.path, ([], []))[1].append(f)
            for rel, (modules, findings) in per_file.items():
                yield root / rel, FileEntry(root, tuple(modules), tuple(findings))


def main() -> None:
    if sys.argv[1] == "--one":  # --one FILE [WORKSPACE_FOLDER ...]
        from .index import ModuleIndex

        path = Path(sys.argv[2])
        text = sys.stdin.buffer.read().decode("utf-8")
        entry = ModuleIndex(folders=[Path(f) for f in sys.argv[3:]]).compute(path, {path: text})
        sys.stdout.write(CODEC.dumps({"path": path, "entry": replace(entry, text=None)}) + "\n")
        return
    for path, entry in scan(Path(sys.argv[1])):
        sys.stdout.write(CODEC.dumps({"path": path, "entry": entry}) + "\n")
        sys.stdout.flush()


async def scan_one(path: Path, text: str, folders: Iterable[Path] = ()) -> FileEntry | None:
    """``path``'s entry for ``text``, parsed in a subprocess: its memory goes back to the
    system when it exits. None if the scan failed. ``folders``: the workspace folders."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "exportlens.server.indexer", "--one", str(path), *map(str, folders),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=_env(),
    )  # fmt: skip
    try:
        out, _ = await proc.communicate(text.encode("utf-8", "surrogatepass"))
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        raise
    try:
        return replace(CODEC.loads(out)["entry"], text=text)
    except (CodecError, KeyError, TypeError, ValueError):
        return None


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (PACKAGE_PARENT, os.environ.get("PYTHONPATH"))))}


class Indexer:
    """Runs the scan subprocess for a folder; calls ``on_file(path, entry)`` per result."""

    def __init__(self, folder: Path, on_file: Callable[[Path, FileEntry], None], on_done: Callable[[int], None]) -> None:
        # the server's own interpreter, never the `python` setting: indexing runs in untrusted
        # workspaces too, and a workspace must not choose what gets executed there
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "exportlens.server.indexer", str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=_env(),
        )
        self._thread = threading.Thread(target=self._read, args=(on_file, on_done), daemon=True, name="exportlens-indexer")
        self._thread.start()

    def _read(self, on_file: Callable[[Path, FileEntry], None], on_done: Callable[[int], None]) -> None:
        assert self.proc.stdout is not None
        count = 0
        for line in self.proc.stdout:
            try:
                item = CODEC.loads(line)
                path, entry = item["path"], item["entry"]
            except (CodecError, KeyError, TypeError):
                continue
            count += 1
            on_file(path, entry)
        self.proc.wait()
        on_done(count)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


if __name__ == "__main__":
    main()
