"""The module index: which nn.Module classes each Python file defines (no torch).

Open and changed files are rescanned here, at once; the rest of the workspace is
scanned by ``scanner`` in a subprocess, so that parsing thousands of files never
holds this process's interpreter lock or memory while it answers requests.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...exporter.core.report import Finding
from ...exporter.core.sources import Sources
from ...exporter.core.targets import ModuleClass, Target
from ...exporter.find.declared import declared_in
from ...exporter.find.discover import Project
from ...exporter.find.index_cache import Stamp, stamp
from ...exporter.find.outline import FileOutline
from ...exporter.spec.loading import PYPROJECT, ProjectSpecs, find_root, load_project


@dataclass(frozen=True)
class FileEntry:
    root: Path  # the project root: the folder holding pyproject.toml, else the workspace folder (spec.find_root)
    modules: tuple[ModuleClass, ...] = ()
    findings: tuple[Finding, ...] = ()  # syntax errors
    text: str | None = field(default=None, repr=False, compare=False)  # the editor's text it came from


@dataclass
class ModuleIndex:
    files: dict[Path, FileEntry] = field(default_factory=dict)
    folders: list[Path] = field(
        default_factory=list
    )  # the workspace folders: a project without pyproject.toml is the one holding it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _outlines: dict[Path, tuple[Stamp, FileOutline | Finding]] = field(default_factory=dict, repr=False)
    _projects: dict[Path, tuple[bytes | None, ProjectSpecs]] = field(default_factory=dict, repr=False)

    def scan(self, path: Path, overrides: Mapping[Path, str]) -> FileEntry:
        """Rescan one file (its text from ``overrides`` if open in the editor) into the index."""
        entry = self.compute(path, overrides)
        self.put(path, entry)
        return entry

    def compute(self, path: Path, overrides: Mapping[Path, str]) -> FileEntry:
        """One file's entry, without storing it (safe off the event loop); a text already
        scanned is not parsed again."""
        text = overrides.get(path)
        old = self.files.get(path)
        if old is not None and text is not None and old.text == text:
            return old
        root = find_root(path, self.folders)
        files = Sources.of(root, overrides)
        project = Project(files, files=self._saved(overrides))
        found = project.discover([path])
        self._keep(project.files, overrides)
        if not found.findings:  # a module a factory table declares in this file (no class of its own)
            found.modules += declared_in(
                files.rel(path), self.project(files).tables, (m.target for m in found.modules), files
            )
        return FileEntry(root, tuple(found.modules), tuple(f for f in found.findings), text)

    def project(self, files: Sources) -> ProjectSpecs:
        """The project's pyproject.toml as ``files`` has it (the editor's buffer, else the
        disk), parsed once per text: for the index's factory modules and the session's specs."""
        text = files.bytes(PYPROJECT)
        with self._lock:
            kept = self._projects.get(files.root)
        if kept is None or kept[0] != text:
            kept = (text, load_project(files))
            with self._lock:
                self._projects[files.root] = kept
        return kept[1]

    def _saved(self, overrides: Mapping[Path, str]) -> dict[Path, FileOutline | Finding]:
        """The outlines of files not open in the editor, where the disk still has what they were made from."""
        with self._lock:
            kept = list(self._outlines.items())
        return {p: o for p, (at, o) in kept if p not in overrides and stamp(p) == at}

    def _keep(self, files: Mapping[Path, FileOutline | Finding], overrides: Mapping[Path, str]) -> None:
        """Keep the outlines of the files a scan read from disk (the bases an open file leads
        through: ``modeling_utils.py`` is not parsed again on every keystroke)."""
        stamps = {p: stamp(p) for p in files if p not in overrides}
        with self._lock:
            self._outlines.update({p: (at, files[p]) for p, at in stamps.items() if at is not None})

    def put(self, path: Path, entry: FileEntry, *, only_if_absent: bool = False) -> None:
        with self._lock:
            if only_if_absent and path in self.files:
                return  # the editor's fresher scan wins over the background one
            self.files[path] = entry

    def remove(self, path: Path) -> None:
        """Forget a file, or everything under a folder (its projects' specs too)."""
        with self._lock:
            for kept in (self.files, self._projects):
                for p in [p for p in kept if p == path or path in p.parents]:
                    del kept[p]

    def get(self, path: Path) -> FileEntry | None:
        return self.files.get(path)

    def module_at(self, path: Path, line: int) -> ModuleClass | None:
        """The module whose class statement holds 1-based ``line``."""
        entry = self.files.get(path)
        if entry is None:
            return None
        inside = [m for m in entry.modules if m.span.line <= line <= (m.span.end_line or m.span.line)]
        return max(inside, key=lambda m: m.span.line, default=None)

    def by_target(self, root: Path, target: Target) -> ModuleClass | None:
        """The class ``target`` names (whatever its variant), where the index has it."""
        entry = self.files.get(root / target.path)
        modules = entry.modules if entry is not None else ()
        return next((m for m in modules if (m.path, m.name) == (target.path, target.name)), None)

    def under(self, root: Path) -> list[tuple[Path, ModuleClass]]:
        with self._lock:
            items = list(self.files.items())
        return [(p, m) for p, e in items if e.root == root for m in e.modules]

    def __len__(self) -> int:
        return sum(len(e.modules) for e in self.files.values())
