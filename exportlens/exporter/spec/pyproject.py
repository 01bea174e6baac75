"""pyproject.toml read once, as a tree where every key, table header, string and array item
knows where it is written (a ``Span``), next to its values (no torch).

The spec (loading, module_spec, variants, suppressions), the walk's ``exclude`` and the
editor's features all read this tree, so each follows the text it is given: the editor's
unsaved buffer as well as the disk. Positions come from ``toml_text.Scanner``, which also
reads a text being typed; values from ``toml_text.values``, only where the whole text parses.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.sources import Sources, resolved
from ..core.targets import Location, Span
from ..find.walk import exclude_problem
from . import toml_text
from .toml_text import Path_

if TYPE_CHECKING:
    import tomlkit.exceptions

PYPROJECT = "pyproject.toml"
SECTION = ("tool", "exportlens")
MODULES = (*SECTION, "modules")
VARIANTS = "variants"


@dataclass(frozen=True)
class Node:
    """A key or a string value where it is written (a quoted one: inside its quotes); its
    absolute key path, an array's item or an array of tables' table by its index."""

    path: Path_
    span: Span
    value: str | None  # None where escapes make text and value differ
    is_key: bool
    start: int  # offsets into the text: the editor's cursor is one
    end: int


class Pyproject:
    """One text of pyproject.toml: its nodes, its table headers and its values."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.error: tomlkit.exceptions.ParseError | None = None
        scan = toml_text.Scanner(text).run()
        starts = [0]
        for line in text.splitlines(keepends=True):  # the lines an editor counts
            starts.append(starts[-1] + len(line))
        self._starts = starts
        self.nodes = [Node(t.path, self.span(t.start, t.end), t.value, t.is_key, t.start, t.end) for t in scan.tokens]
        self.headers: dict[Path_, Span] = {}
        for path, start, end in scan.headers:
            self.headers.setdefault(path, self.span(start, end))
        self._keys: dict[Path_, Node] = {}
        for n in self.nodes:
            if n.is_key:
                self._keys.setdefault(n.path, n)

    def span(self, start: int, end: int) -> Span:
        """The span of the text between two offsets."""
        (line, column), (end_line, end_column) = self.place(start), self.place(end)
        return Span(line, column, end_line, end_column)

    def place(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of an offset."""
        line = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        return line + 1, offset - self._starts[line] + 1

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based line and column (past the end: the end)."""
        line = min(max(line, 1), len(self._starts))
        return min(self._starts[line - 1] + column - 1, len(self.text))

    @cached_property
    def doc(self) -> dict[str, Any] | None:
        """The text's values; None where it is not TOML (``error`` says where)."""
        if not self.text:
            return {}  # no pyproject.toml: nothing to parse, and tomlkit need not be imported
        found = toml_text.values(self.text)
        if found is not None:
            return found
        import tomlkit.exceptions

        try:
            return toml_text.parse(self.text).unwrap()
        except tomlkit.exceptions.ParseError as e:
            self.error = e
            return None

    def key(self, path: Path_) -> Span | None:
        """Where the key ``path`` is first written: its last part (a header's, a dotted key's)."""
        node = self._keys.get(tuple(path))
        return node.span if node else None

    def where(self, path: Path_, default: Span | None = None) -> Location:
        return Location(PYPROJECT, self.key(path) or default or Span(1))

    def items(self, path: Path_) -> list[Node]:
        """The string items of the array at ``path``, in order."""
        n = len(path)
        return [
            x
            for x in self.nodes
            if not x.is_key and len(x.path) == n + 1 and x.path[:n] == tuple(path) and isinstance(x.path[n], int)
        ]

    def variant_home(self, target: str, index: int) -> Span | None:
        """Where the ``index``-th variant of ``target`` is written: its ``[[...variants]]``
        header, else its ``name`` key (in an inline array)."""
        path = (*MODULES, target, VARIANTS, index)
        return self.headers.get(path) or self.key((*path, "name"))

    def variant_index(self, target: str, name: str) -> int | None:
        """The index of ``target``'s variant named ``name``, as written."""
        n = len(MODULES)
        for x in self.nodes:
            p = x.path
            if len(p) == n + 4 and p[:n] == MODULES and p[n : n + 2] == (target, VARIANTS) and p[-1] == "name":
                index = p[n + 2]
                if not x.is_key and x.value == name and isinstance(index, int):
                    return index
        return None

    def module_tables(self, target: str) -> list[Path_]:
        """The key paths of ``target``'s table (``path.py:Class`` or ``path.py:Class[variant]``):
        a variant's own first, then its class's, whose keys it inherits."""
        module, _, variant = target.partition("[")
        if not variant:
            return [(*MODULES, target)]
        index = self.variant_index(module, variant.removesuffix("]"))
        return [*([(*MODULES, module, VARIANTS, index)] if index is not None else []), (*MODULES, module)]

    def exclude(self) -> list[str]:
        """The project's ``exclude`` patterns; none where they are not well formed (the spec reports that)."""
        section: Any = self.doc or {}
        for key in SECTION:
            section = section.get(key, {}) if isinstance(section, dict) else {}
        value = section.get("exclude", []) if isinstance(section, dict) else []
        return value if exclude_problem(value) is None else []


@lru_cache(maxsize=16)
def read(text: str) -> Pyproject:
    """The tree of ``text`` (kept for the last few texts: every module's spec reads one)."""
    return Pyproject(text)


def excludes(sources: Sources | None = None) -> Callable[[Path], Sequence[str]]:
    """The ``exclude`` of the project in a folder, read from its pyproject.toml as ``sources``
    has it (an unsaved buffer over the disk): what whoever walks hands the walk."""
    files = sources or Sources.of(Path("/"))

    def of(folder: Path) -> Sequence[str]:
        try:
            return read(files.decode(resolved(folder) / PYPROJECT)).exclude()
        except (OSError, UnicodeDecodeError):
            return []

    return of
