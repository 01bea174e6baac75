"""Unsaved editor buffers, imported from memory by a job's process: a ``sys.meta_path``
finder serves the given texts under their real paths, so tracebacks, ``inspect`` and
torch's stack traces name the user's file and lines."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class _Loader(importlib.abc.SourceLoader):
    """Source from memory, with the real path as ``__file__`` (tracebacks and torch's
    stack traces then name the user's file and lines). No bytecode is read or written."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self.text.encode("utf-8")
        with open(path, "rb") as f:
            return f.read()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the overridden files the way the path finder would find them on disk:
    in the same folders, packages before modules."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.names = {Path(p).parent.name if Path(p).name == "__init__.py" else Path(p).stem for p in files}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        name = fullname.rpartition(".")[2]
        if name not in self.names:  # the common case: not ours, costs one set lookup
            return None
        for folder in path if path is not None else sys.path:
            folder = os.path.abspath(folder or os.curdir)
            for candidate, package in (
                (os.path.join(folder, name, "__init__.py"), True),
                (os.path.join(folder, name + ".py"), False),
            ):
                if candidate in self.files:
                    locations = [os.path.dirname(candidate)] if package else None
                    loader = _Loader(candidate, self.files[candidate])
                    return importlib.util.spec_from_file_location(
                        fullname, candidate, loader=loader, submodule_search_locations=locations
                    )
                if os.path.isfile(candidate):
                    return None  # on disk, earlier in the path: the normal import finds it
        return None


@contextmanager
def overlay(sources: dict[Path, str]) -> Iterator[None]:
    """Import ``sources`` (absolute path -> text) from memory instead of the disk."""
    if not sources:
        yield
        return
    files = {str(p): text for p, text in sources.items()}
    before = {path: linecache.cache[path] for path in files if path in linecache.cache}  # an overlay this one is inside
    finder = _Finder(files)
    sys.meta_path.insert(0, finder)
    for path, text in files.items():  # what tracebacks, inspect and torch's stack traces show
        lines = text.splitlines(keepends=True)
        linecache.cache[path] = (len(text), None, lines, path)  # mtime None: never re-read from disk
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for path in files:
            linecache.cache.pop(path, None)
        linecache.cache.update(before)
