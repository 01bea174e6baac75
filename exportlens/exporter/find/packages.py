"""Where a Python file sits among its packages, as the import system sees it (standard library only).

A file's dotted name comes from its package chain, the folders above it that hold
``__init__.py``; its relative imports resolve against that chain, and absolute ones
are looked for from the folder above it too. Neither depends on the folder a scan
started from nor on where the project root is: ``transformers/models/bert/modeling_bert.py``
is ``transformers.models.bert.modeling_bert`` whether the scan starts at
``transformers/`` or above it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

Exists = Callable[[Path], bool]  # whether a file exists: the disk's answer, or the editor's buffers over it


def package_base(folder: Path, exists: Exists = Path.is_file) -> Path:
    """The folder above the top of ``folder``'s package chain: the ``sys.path`` entry its
    modules import from by their dotted names (``folder`` itself when it is no package)."""
    while exists(folder / "__init__.py") and folder.parent != folder:
        folder = folder.parent
    return folder


def name_base(path: Path, root: Path, exists: Exists = Path.is_file) -> Path:
    """The folder ``path``'s dotted name counts from. The root where the package chain stays
    inside it (a folder between the root and the chain is a namespace package: ``src.lib.net``);
    the folder above the chain where the chain climbs to the root or past it, or the file lies
    outside the root."""
    return _counted_from(package_base(path.parent, exists), root)


def _counted_from(base: Path, root: Path) -> Path:
    """``name_base`` of a file whose package chain starts in ``base``."""
    return root if base == root or root in base.parents else base


def search_folders(module: str, root: Path, near: Path, exists: Exists = Path.is_file) -> tuple[Path, ...]:
    """Where absolute import ``module`` in a file of folder ``near`` is looked for, in order: the
    root, its ``src/``, the folder above ``near``'s package chain where ``module`` is in the
    chain's own top package (the folder's other packages are another project's: site-packages),
    and ``near`` itself (script style)."""
    return _search(module, root, near, package_base(near, exists))


def _search(module: str, root: Path, near: Path, base: Path) -> tuple[Path, ...]:
    own = base != near and module.partition(".")[0] == near.relative_to(base).parts[0]
    return tuple(dict.fromkeys((root, root / "src", *([base] if own else []), near)))


def module_file(module: str, root: Path, near: Path, exists: Exists = Path.is_file) -> Path | None:
    """The file of absolute import ``module`` in a file of folder ``near``, under the first of
    ``search_folders`` that has it; a package before a module of the same name, as Python does
    (``""``: the root's own package)."""
    return Finder(root, exists).module_file(module, near)


class Finder:
    """``module_file`` for many lookups in one tree: where each folder's package chain starts,
    and which module each folder holds, are looked up once (a scan of transformers asks
    thousands of times, from hundreds of folders, for the same few hundred modules). Kept
    by text, not ``Path``: hashing and comparing a ``Path`` costs ten times a string's."""

    def __init__(self, root: Path, exists: Exists = Path.is_file) -> None:
        self.root, self.exists = root, exists
        self._bases: dict[str, Path] = {}  # by folder
        self._folders: dict[tuple[str, str], tuple[str, ...]] = {}  # by folder and top package
        self._held: dict[tuple[str, str], Path | None] = {}

    def package_base(self, folder: Path) -> Path:
        """``package_base(folder)``, looked up once per folder."""
        base = self._bases.get(key := str(folder))
        if base is None:
            base = self._bases[key] = package_base(folder, self.exists)
        return base

    def package(self, path: Path) -> str:
        """The dotted name of the package ``path`` is in (``name_base``'s, with ``self.root``)."""
        return dotted_names(_counted_from(self.package_base(path.parent), self.root), path)[1]

    def module_file(self, module: str, near: Path) -> Path | None:
        top = module.partition(".")[0]
        folders = self._folders.get((str(near), top))
        if folders is None:
            found = _search(module, self.root, near, self.package_base(near))
            folders = self._folders[(str(near), top)] = tuple(map(str, found))
        for folder in folders:
            key = (folder, module)
            if key not in self._held:
                self._held[key] = self._held_in(folder, module, top)
            if self._held[key] is not None:
                return self._held[key]
        return None

    def _held_in(self, folder: str, module: str, top: str) -> Path | None:
        listed = self.exists if isinstance(self.exists, Listed) else None
        if listed is not None and module and not listed.holds(folder, top):
            return None  # one listing of the folder answers for every module under a name it lacks
        base = os.path.join(folder, *module.split(".")) if module else folder
        candidates = (
            (os.path.join(base, "__init__.py"), base + ".py") if module else (os.path.join(base, "__init__.py"),)
        )
        if listed is not None:  # it takes the text: no Path made for a name that is not there
            return next((Path(c) for c in candidates if listed(c)), None)
        return next((p for c in candidates if self.exists(p := Path(c))), None)


class Listed:
    """Whether a file is on disk, from one listing per folder: a scan asks for tens of thousands
    of names in a few hundred folders (a folder named like a file reads as one: no package has one)."""

    def __init__(self) -> None:
        self._names: dict[str, frozenset[str]] = {}

    def __call__(self, path: Path | str) -> bool:
        folder, name = os.path.split(path)
        return name in self._listing(folder)

    def holds(self, folder: str, name: str) -> bool:
        """Whether ``folder`` holds a module or package called ``name``."""
        names = self._listing(folder)
        return name in names or f"{name}.py" in names

    def _listing(self, folder: str) -> frozenset[str]:
        names = self._names.get(folder)
        if names is None:
            try:
                names = frozenset(os.listdir(folder or "."))
            except OSError:
                names = frozenset()
            self._names[folder] = names
        return names


def dotted_names(base: Path, path: Path) -> tuple[str, str]:
    """``path``'s dotted module name counted from ``base``, and its package's (``__init__.py``
    names its package; a file at ``base`` has no package)."""
    try:
        parts = list(path.relative_to(base).with_suffix("").parts)
    except ValueError:
        parts = [path.stem]
    if parts and parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def absolute(name: str, package: str) -> str | None:
    """Import ``name`` (``..x``) made absolute from a file of ``package``, as importlib resolves
    it; None when it climbs out of the package."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    dots = len(name) - len(rest)
    if not package:
        return rest  # a file at the root: read ``.x`` as ``x``, as a script would
    bits = package.rsplit(".", dots - 1)
    if len(bits) < dots:
        return None
    return f"{bits[0]}.{rest}" if rest else bits[0]  # ``from . import *``: the package
