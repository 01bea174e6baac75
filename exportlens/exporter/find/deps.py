"""Which project files a module file depends on, for the result cache (no torch).

Only imports that resolve to project files count, looked for as discovery looks
(``packages``: the root, its ``src/``, the file's package chain, its folder): editing
an imported helper invalidates the verdict; site-packages are covered by the torch
version and interpreter in the cache key. Unsaved editor buffers (in
``Sources``) stand in for the files on disk, and may be files not yet saved at all.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.sources import Sources
from .packages import module_file, name_base
from .syntax import UNPARSABLE


def _package(file: Path, sources: Sources) -> list[str]:
    """The package a file's relative imports start from (``pkg/__init__.py`` and ``pkg/mod.py``: pkg),
    named from its package chain as discovery names it."""
    return list(file.relative_to(name_base(file, sources.root, sources.exists)).with_suffix("").parts)[:-1]


@dataclass(frozen=True)
class _Import:
    """One import statement: ``import a.b, c`` (``source`` None) or ``from source import x, y``
    (``source`` "" for ``from . import x``, ``level`` its dots)."""

    source: str | None
    level: int
    names: tuple[str, ...]


@lru_cache(maxsize=64)
def _imports(text: bytes) -> tuple[_Import, ...] | None:
    """A file's import statements; None where it does not parse. Kept by text: a job's cache
    key and its preload each read the imports of the same texts, and a save sends two jobs
    of one text. What is kept is these few names, not the syntax tree (the server holds the
    cache, and a tree is many times its text)."""
    try:
        tree = ast.parse(text)
    except UNPARSABLE:
        return None
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.append(_Import(None, 0, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            found.append(_Import(node.module or "", node.level, tuple(a.name for a in node.names)))
    return tuple(found)


def imported_files(sources: Sources, file: Path) -> set[Path]:
    """Project files ``file`` imports directly (absolute and relative imports)."""
    root, file = sources.root, file.resolve()
    imports = _imports(sources.bytes(file) or b"")
    if imports is None:
        return set()
    out: set[Path] = set()
    package = _package(file, sources)
    for imported in imports:
        names = list(imported.names)
        if imported.source is not None:
            if imported.level:
                base = package[: len(package) - imported.level + 1] if imported.level > 1 else package
                prefix = ".".join(base + ([imported.source] if imported.source else []))
            else:
                prefix = imported.source
            names = [prefix] + [f"{prefix}.{name}" if prefix else name for name in imported.names]
        for dotted in names:
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):  # `import a.b.c` imports a, a.b and a.b.c
                found = module_file(".".join(parts[:i]), root, file.parent, sources.exists)
                if found is not None:
                    out.add(found.resolve())
    out.discard(file)
    return out


# already in every warm worker, or ours: never worth naming
_WARM = frozenset({"torch", "exportlens", "__future__"})


def third_party(sources: Sources, file: Path, paths: Iterable[Path] | None = None) -> tuple[str, ...]:
    """What ``file``'s closure imports from packages outside the project and the standard
    library: ``transformers.models.bert`` for an import, ``transformers:BertModel`` for a
    name taken from one (a lazy package such as transformers loads its code only then).
    A warm worker may import these once, so that each job's child pays only for the
    user's own files. ``paths``: the closure, where the caller has it already."""
    names: set[str] = set()
    for path in closure(sources, file) if paths is None else paths:
        for imported in _imports(sources.bytes(path) or b"") or ():
            if imported.source is None:
                found = list(imported.names)
            elif not imported.level and imported.source:
                found = [f"{imported.source}:{n}" for n in imported.names if n != "*"] or [imported.source]
            else:
                continue
            top = {n: n.split(".")[0].split(":")[0] for n in found}
            names.update(
                n
                for n, t in top.items()
                if t not in _WARM and t not in sys.stdlib_module_names and not _own(t, path, sources)
            )
    return tuple(sorted(names))


def _own(top: str, path: Path, sources: Sources) -> bool:
    return module_file(top, sources.root, path.parent, sources.exists) is not None


def closure(sources: Sources, file: Path, imports: Callable[[Sources, Path], Set[Path]] = imported_files) -> list[Path]:
    """``file`` and every project file it imports, transitively, sorted (``imports``: a
    file's direct imports, parsed now or kept by an ``ImportGraph``)."""
    seen: set[Path] = set()
    todo = [file.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(imports(sources, current) - seen)
    return sorted(seen)


class ImportGraph:
    """Each project file's direct imports, kept between calls (the server's, to know which
    open modules a save affects): a file is parsed again only when its text changed, known
    by its buffer, or by its size and modification time on disk."""

    def __init__(self) -> None:
        self._edges: dict[tuple[Path, Path], tuple[object, frozenset[Path]]] = {}

    def imports(self, sources: Sources, file: Path) -> frozenset[Path]:
        stamp, key = _stamp(sources, file), (sources.root, file)
        kept = self._edges.get(key)
        if kept is None or kept[0] != stamp:
            kept = self._edges[key] = (stamp, frozenset(imported_files(sources, file)))
        return kept[1]

    def closure(self, sources: Sources, file: Path) -> list[Path]:
        return closure(sources, file, self.imports)

    def forget(self) -> None:
        """A file was created, deleted or renamed: an import may now resolve elsewhere."""
        self._edges.clear()


def _stamp(sources: Sources, file: Path) -> object:
    if file in sources.buffers:
        return hashlib.sha1(sources.buffers[file].encode("utf-8", "surrogatepass")).hexdigest()
    try:
        stat = file.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def fingerprint(sources: Sources, file: Path, *extra: str, paths: Iterable[Path] | None = None) -> str:
    """A hash of the contents of ``file``'s closure (unsaved text where given) and ``extra``
    strings. ``paths``: the closure, where the caller has it already."""
    h = hashlib.sha256()
    for path in closure(sources, file) if paths is None else paths:
        h.update(sources.rel(path).encode())
        h.update(sources.bytes(path) or b"<missing>")
    for item in extra:
        h.update(b"\0" + item.encode())
    return h.hexdigest()


def digest(sources: Sources, path: str) -> str:
    """A hash of the text a worker will see for project file ``path``."""
    text = sources.bytes(path)
    return hashlib.sha256(text if text is not None else b"<missing>").hexdigest()
