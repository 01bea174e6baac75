"""Scan a workspace for nn.Module classes in a subprocess (no torch), streaming results.

``python -m exportlens.server.indexer FOLDER`` prints one JSON line per Python file
that defines a module or does not parse: ``{"path", "root", "modules", "findings"}``.
Files are scanned in small batches, so memory stays flat however large the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..exporter.core.report import Finding, from_dict, to_dict
from ..exporter.core.targets import Forward, ModuleClass, Param, Span
from ..exporter.static.discover import _walk, discover
from ..exporter.static.spec import find_root
from .index import FileEntry

BATCH = 32
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # so the subprocess imports this exportlens


def module_to_dict(m: ModuleClass) -> dict[str, Any]:
    return asdict(m)


def module_from_dict(d: dict[str, Any]) -> ModuleClass:
    def span(v: Any) -> Span | None:
        return Span(**v) if v else None

    fwd = d.get("forward")
    forward = None
    if fwd:
        forward = Forward(tuple(Param(**p) for p in fwd["params"]), span(fwd["span"]), span(fwd["name_span"]), tuple(fwd["body_lines"]))
    return ModuleClass(
        d["path"],
        d["name"],
        span(d["span"]),
        span(d["name_span"]),
        tuple(d["bases"]),
        forward,
        d.get("example_method"),
        span(d.get("example_span")),
        d.get("has_dynamic_shapes", False),
    )


def scan(folder: Path) -> Iterator[dict[str, Any]]:
    files = sorted(_walk(folder.resolve()))
    by_root: dict[Path, list[Path]] = {}
    for f in files:
        by_root.setdefault(find_root(f), []).append(f)
    for root, paths in by_root.items():
        for i in range(0, len(paths), BATCH):
            found = discover(root, paths[i : i + BATCH])
            per_file: dict[str, dict[str, Any]] = {}
            for m in found.modules:
                per_file.setdefault(m.path, {"modules": [], "findings": []})["modules"].append(module_to_dict(m))
            for f in found.findings:
                per_file.setdefault(f.path, {"modules": [], "findings": []})["findings"].append(to_dict(f))
            for rel, data in per_file.items():
                yield {"path": str(root / rel), "root": str(root), **data}


def main() -> None:
    for item in scan(Path(sys.argv[1])):
        sys.stdout.write(json.dumps(item) + "\n")
        sys.stdout.flush()


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
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (PACKAGE_PARENT, os.environ.get("PYTHONPATH"))))},
        )
        self._thread = threading.Thread(target=self._read, args=(on_file, on_done), daemon=True, name="exportlens-indexer")
        self._thread.start()

    def _read(self, on_file: Callable[[Path, FileEntry], None], on_done: Callable[[int], None]) -> None:
        assert self.proc.stdout is not None
        count = 0
        for line in self.proc.stdout:
            try:
                item = json.loads(line)
                entry = FileEntry(
                    Path(item["root"]),
                    tuple(module_from_dict(m) for m in item["modules"]),
                    tuple(from_dict(Finding, f) for f in item["findings"]),
                )
            except (ValueError, KeyError, TypeError):
                continue
            count += 1
            on_file(Path(item["path"]), entry)
        self.proc.wait()
        on_done(count)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


if __name__ == "__main__":
    main()
