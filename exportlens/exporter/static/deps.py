"""Which project files a module file depends on, for the result cache (no torch).

Only imports that resolve to files under the project root count: editing an
imported helper invalidates the verdict; site-packages are covered by the
torch version and interpreter in the cache key. Unsaved editor buffers
(``sources``, by absolute path) stand in for the files on disk, and may be
files not yet saved at all.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Mapping
from pathlib import Path

Sources = Mapping[Path, str]


def _module_file(root: Path, dotted: str, sources: Sources) -> Path | None:
    base = root.joinpath(*dotted.split(".")) if dotted else root
    for candidate in (base / "__init__.py", base.with_suffix(".py")):  # packages first, as Python does
        if candidate in sources or candidate.is_file():
            return candidate
    return None


def _package(root: Path, file: Path) -> list[str]:
    """The package a file's relative imports start from (``pkg/__init__.py`` and ``pkg/mod.py``: pkg)."""
    return list(file.relative_to(root).with_suffix("").parts)[:-1]


def _text(file: Path, sources: Sources) -> bytes | None:
    if file in sources:
        return sources[file].encode("utf-8")
    try:
        return file.read_bytes()
    except OSError:
        return None


def imported_files(root: Path, file: Path, sources: Sources | None = None) -> set[Path]:
    """Project files ``file`` imports directly (absolute and relative imports)."""
    sources = _resolved(sources)
    try:
        tree = ast.parse(_text(file.resolve(), sources) or b"")
    except (SyntaxError, ValueError):
        return set()
    out: set[Path] = set()
    package = _package(root, file)
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [prefix] + [f"{prefix}.{a.name}" if prefix else a.name for a in node.names]
        for dotted in names:
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):  # `import a.b.c` imports a, a.b and a.b.c
                found = _module_file(root, ".".join(parts[:i]), sources)
                if found is not None:
                    out.add(found.resolve())
    out.discard(file.resolve())
    return out


def closure(root: Path, file: Path, sources: Sources | None = None) -> list[Path]:
    """``file`` and every project file it imports, transitively, sorted."""
    root, file, sources = root.resolve(), file.resolve(), _resolved(sources)
    seen: set[Path] = set()
    todo = [file]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(imported_files(root, current, sources) - seen)
    return sorted(seen)


def fingerprint(root: Path, file: Path, *extra: str, sources: Sources | None = None) -> str:
    """A hash of the contents of ``file``'s closure (unsaved text where given) and ``extra`` strings."""
    root, sources = root.resolve(), _resolved(sources)
    h = hashlib.sha256()
    for path in closure(root, file, sources):
        h.update(str(path.relative_to(root)).encode())
        h.update(_text(path, sources) or b"<missing>")
    for item in extra:
        h.update(b"\0" + item.encode())
    return h.hexdigest()


def _resolved(sources: Sources | None) -> dict[Path, str]:
    return {Path(p).resolve(): text for p, text in (sources or {}).items()}


def digest(root: Path, path: str, sources: Mapping[str, str]) -> str:
    """A hash of the text a worker will see for project file ``path``: the unsaved text
    in ``sources`` (project-relative keys), else the disk's."""
    text = sources[path].encode("utf-8") if path in sources else _text(root / path, {})
    return hashlib.sha256(text if text is not None else b"<missing>").hexdigest()
