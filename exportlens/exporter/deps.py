"""Which project files a module file depends on, for the result cache (no torch).

Only imports that resolve to files under the project root count: editing an
imported helper invalidates the verdict; site-packages are covered by the
torch version and interpreter in the cache key.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split(".")) if dotted else root
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package(root: Path, file: Path) -> list[str]:
    parts = list(file.relative_to(root).with_suffix("").parts)
    return parts[:-1] if parts[-1] != "__init__" else parts[:-1]


def imported_files(root: Path, file: Path) -> set[Path]:
    """Project files ``file`` imports directly (absolute and relative imports)."""
    try:
        tree = ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError):
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
                found = _module_file(root, ".".join(parts[:i]))
                if found is not None:
                    out.add(found.resolve())
    out.discard(file.resolve())
    return out


def closure(root: Path, file: Path) -> list[Path]:
    """``file`` and every project file it imports, transitively, sorted."""
    root, file = root.resolve(), file.resolve()
    seen: set[Path] = set()
    todo = [file]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(imported_files(root, current) - seen)
    return sorted(seen)


def fingerprint(root: Path, file: Path, *extra: str) -> str:
    """A hash of the contents of ``file``'s closure and ``extra`` strings."""
    h = hashlib.sha256()
    for path in closure(root, file):
        h.update(str(path.relative_to(root.resolve())).encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<missing>")
    for item in extra:
        h.update(b"\0" + item.encode())
    return h.hexdigest()
