"""Which files may define a module, from their text alone, before any file is parsed.

Each file is sketched with a few regular expressions: the classes it declares with the
names in their bases, and the names its imports bind. A name is *moduleish* when an
import from ``torch`` binds it, when a moduleish class has it, or when an import of a
moduleish name binds it (under any alias); iterated to a fixed point over the whole
project. A class can only be a module if a name in its bases is moduleish, so a file
with no such class need not be parsed. Names are matched without their modules, so
the set errs only on the side of parsing more: star imports, re-exports through
``__init__.py`` and module aliases (``layers.Block``) are all covered by the bare name;
a file without a class keeps the imports that rename (``from .base import Base as B``)
or come from torch, which another file may import from it.
Matches inside strings and comments only add names, never remove a class.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

# No anchors or word boundaries: a pattern that starts with a literal is searched for in C
# at its speed (ten times faster here); what they would rule out only adds names
_CLASS = re.compile(r"class\s+(\w+)\s*\(([^)]*)\)")
_FROM = re.compile(r"from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n;\\]*(?:\\\n[^\n;\\]*)*)")
_IMPORT = re.compile(r"import[ \t]+([^\n;\\]*(?:\\\n[^\n;\\]*)*)")  # also the tail of ``from m import x``
_NAME = re.compile(r"[A-Za-z_]\w*")
_K = TypeVar("_K")
_ANY = "*"  # a base we cannot read a name from (a call): the class is kept
MARKER = "exportlens:"  # in every suppression comment (spec/suppressions.py): a file without it has none


@dataclass(frozen=True)
class Sketch:
    """What the text of one file says, as plain data (kept in the index cache)."""

    classes: tuple[tuple[str, tuple[str, ...]], ...]  # each class: its name, the names in its bases
    binds: tuple[
        tuple[str, str, str], ...
    ]  # each import: the name bound, the module, the name imported ("" for ``import m``)
    marked: bool = False  # the text holds ``MARKER``: a check reads its suppression comments, the others not


def sketch(text: str) -> Sketch:
    classes = tuple((m.group(1), _base_names(m.group(2))) for m in _CLASS.finditer(text) if m.group(2).strip())
    binds = _binds(text)
    if not classes:  # no class with bases: only imports that give a name another can import matter
        binds = tuple(b for b in binds if _renames(b) or _from_torch(b[1]))
    return Sketch(classes, binds, MARKER in text)


def _renames(bind: tuple[str, str, str]) -> bool:
    """``from .base import Base as B``: a re-export (an ``__init__.py``) under a name of its own."""
    return bind[2] not in ("", bind[0])


def _from_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def _binds(text: str) -> tuple[tuple[str, str, str], ...]:
    binds: list[tuple[str, str, str]] = []
    for m in _FROM.finditer(text):
        for part in m.group(2).strip("()").replace("\\\n", " ").split(","):
            words = part.split()
            if words:
                binds.append((words[2] if len(words) > 2 and words[1] == "as" else words[0], m.group(1), words[0]))
    for m in _IMPORT.finditer(text):
        for part in m.group(1).replace("\\\n", " ").split(","):
            words = part.split()
            if words:
                bound = words[2] if len(words) > 2 and words[1] == "as" else words[0].partition(".")[0]
                binds.append((bound, words[0], ""))
    return tuple(binds)


def _base_names(bases: str) -> tuple[str, ...]:
    if "(" in bases:
        return (_ANY,)  # ``class A(make_base(x), B)``: the text is cut at the first ``)``
    return tuple(dict.fromkeys(_NAME.findall(bases)))


def candidates(sketches: Mapping[_K, Sketch]) -> set[_K]:
    """The files (keys of ``sketches``) that may define a module."""
    names = _moduleish(sketches.values())
    return {
        f for f, s in sketches.items() if any(_ANY in bases or not names.isdisjoint(bases) for _, bases in s.classes)
    }


def _moduleish(sketches: Iterable[Sketch]) -> set[str]:
    sketches = [s for s in sketches if s.classes or s.binds]
    names: set[str] = {_ANY}
    for s in sketches:
        for bound, module, imported in s.binds:
            if _from_torch(module):
                names.add(bound)
                if imported == "*":
                    return _everything(sketches)  # ``from torch.nn import *``: any base may be torch's
    while True:
        before = len(names)
        for s in sketches:
            names.update(name for name, bases in s.classes if not names.isdisjoint(bases))
            names.update(bound for bound, _, imported in s.binds if imported in names)
        if len(names) == before:
            return names


def _everything(sketches: list[Sketch]) -> set[str]:
    return {_ANY} | {n for s in sketches for _, bases in s.classes for n in bases}
