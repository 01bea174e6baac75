"""The files a scan's bases may lead through that it does not scan itself, found from
sketches before any file is parsed (no torch).

The prefilter (prefilter.py) judges a class by the names in its bases, and those are
moduleish only where the file defining them is sketched too. A scan of part of a project
(``exportlens check net.py``), or a base in a file the walk skips (an excluded folder, a
package above the root), would leave that file out and its classes unparsed. So for
each class the prefilter would skip, the modules its base names are imported from are
sketched as well, found as Python finds them (``packages.module_file``), and every
import of a file reached so is followed in turn, until nothing new is reached.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping
from functools import cache
from pathlib import Path

from .packages import Finder, Listed, absolute
from .prefilter import Sketch, candidates


def disk_finder(root: Path) -> Finder:
    """The lookups ``reach`` and ``leads`` share: the disk's files (sketches are of files on disk),
    each folder listed once for both."""
    return Finder(root, Listed())


def reach(finder: Finder, sketches: MutableMapping[Path, Sketch], sketch_of: Callable[[Path], Sketch]) -> set[Path]:
    """Add to ``sketches`` the files they lead to, sketched by ``sketch_of``; returns those."""
    resolve, package = cache(finder.module_file), cache(finder.package)
    added: set[Path] = set()
    while True:
        maybe = candidates(sketches)
        new = set()
        for path, sketched in sketches.items():
            if path in maybe and path not in added:
                continue  # parsed: its bases are resolved through the files they name (discover.Project)
            for name, imported in _imported(sketched, every=path in added):
                module = absolute(name, package(path))
                for dotted in _modules(module, imported) if module is not None else ():
                    found = resolve(dotted, path.parent)
                    if found is not None and found not in sketches:
                        new.add(found)
        if not new:
            return added
        for path in sorted(new):
            sketches[path] = sketch_of(path)
        added |= new


def leads(finder: Finder, sketches: Mapping[Path, Sketch], among: Collection[Path]) -> set[Path]:
    """The sketched files the bases of ``among``'s classes are imported from, and theirs in turn:
    the files outside ``among`` that resolving those bases parses (discover.Project). Named up
    front, they are parsed with the others, in parallel, instead of one by one after."""
    resolve = cache(finder.module_file)
    led: set[Path] = set()
    todo = list(among)
    while todo:
        path = todo.pop()
        package = finder.package(path)
        for name, imported in _imported(sketches[path], every=False):
            module = absolute(name, package)
            for dotted in _modules(module, imported) if module is not None else ():
                found = resolve(dotted, path.parent)
                if found is not None and found in sketches and found not in led and found not in among:
                    led.add(found)
                    todo.append(found)
    return led


def _imported(sketched: Sketch, *, every: bool) -> Iterator[tuple[str, str]]:
    """The imports to follow, each as its module and the name imported from it: ``every``
    import, else those of the names in its classes' bases, and its star imports."""
    bases = {name for _, names in sketched.classes for name in names}
    for bound, module, imported in sketched.binds:
        if every or bound in bases or imported == "*":
            yield module, imported


def _modules(module: str, imported: str) -> tuple[str, ...]:
    """The module, and the name imported from it where that may be a module of its package."""
    if imported in ("", "*"):
        return (module,)
    return (module, f"{module}.{imported}" if module else imported)
