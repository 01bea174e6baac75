"""Find nn.Module classes statically (``ast`` outlines, no torch import).

A class is a module when one of its bases resolves to ``torch.nn.Module`` or any
class under ``torch.nn`` (``nn.Sequential``, ``nn.Linear``, ...), through any
import alias, or to another class in the project that is one (across files).
Bases resolve as Python would import them (``packages``): relative imports against
the file's package chain, through re-exports, star imports and nested classes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core import codes
from ..core.report import Finding
from ..core.sources import Sources, resolved
from ..core.targets import Forward, ModuleClass
from . import outline
from .outline import BaseOutline, ClassOutline, FileOutline, Ref
from .packages import Finder, Listed, dotted_names, name_base
from .syntax import TOO_DEEP, decode_finding, python_syntax_error, syntax_finding, too_deep
from .walk import Exclude, no_exclude, python_files_under, scanned

__all__ = ["Discovery", "Project", "discover", "python_files"]


@dataclass
class Discovery:
    modules: list[ModuleClass] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # syntax errors (EL401)
    # project-relative names of files read whose text holds no suppression comment: a check
    # need not read them again for one (suppressions.py); a hint, not part of what was found
    unmarked: frozenset[str] = field(default_factory=frozenset, compare=False)


# -- public entry point ----------------------------------------------------------


def discover(
    root: Path,
    paths: Iterable[Path] | None = None,
    sources: Sources | Mapping[Path, str] | None = None,
    *,
    exclude: Exclude = no_exclude,
) -> Discovery:
    """The nn.Module classes defined in ``paths`` (files or folders; default: all of ``root``).

    Relative ``paths`` are taken from the current directory, as ``Path`` does.
    ``sources`` overrides file text (unsaved editor buffers), keyed by absolute path.
    Bases are resolved through the files that scanned files import (under ``root``, or
    in their own packages), parsed on demand; only scanned files report syntax errors.
    ``exclude``: each project's exclude patterns (spec/pyproject.py reads them).
    """
    project = Project(Sources.of(root, sources))
    return project.discover(python_files(project.sources, paths, exclude))


# -- which files -----------------------------------------------------------------


def python_files(sources: Sources, paths: Iterable[Path] | None, exclude: Exclude = no_exclude) -> list[Path]:
    """Absolute paths of the ``*.py`` files to scan, sorted, each once."""
    found: set[Path] = set()
    folders: list[Path] = []
    for given in [sources.root] if paths is None else paths:
        path = resolved(Path(given))
        if path.is_dir():
            folders.append(path)
            found.update(python_files_under(path, nested=False, exclude=exclude))
        elif path.suffix == ".py" and sources.exists(path):
            found.add(path)
    # an unsaved new buffer inside a scanned folder is scanned too
    new = (p for p in sources.buffers if p.suffix == ".py")
    found.update(p for p in new if any(scanned(p, f, exclude=exclude) for f in folders))
    return sorted(found, key=_parts)


def _parts(path: Path) -> tuple[str, ...]:
    """The order of ``Path``s, compared as tuples of strings at C speed (a ``Path``'s own ``<`` is Python code)."""
    return path.parts


# -- the project: files parsed on demand, bases resolved across them ------------------

_CLASS = re.compile(r"^[ \t\f]*class\b", re.MULTILINE)  # a class statement starts its line
_Class = tuple[Path, str]  # a project class: its file and its dotted name there (``Outer.Inner``)
_Target = _Class | str | None  # a project class, a name outside the project, or nothing


class Project:
    """Files parsed on demand, bases resolved across them. With ``skeletons`` (a bulk index)
    files are parsed with their function bodies blanked: syntax errors inside bodies go
    unseen, unless ``checked``, where each file is parsed whole and one that does not parse
    is its error (the CLI); but for those in ``sound``, known to parse whole already. ``files``: outlines already
    made (an index cache), by path. ``finder``: the disk's lookups a caller made already (bulk.py's)."""

    def __init__(
        self,
        sources: Sources,
        *,
        skeletons: bool = False,
        checked: bool = False,
        sound: Collection[Path] = frozenset(),
        files: Mapping[Path, FileOutline | Finding] = {},
        finder: Finder | None = None,
    ) -> None:  # read only
        self.sources = sources
        self.root = sources.root
        self.skeletons = skeletons
        self.checked = checked
        self.sound = sound
        self._files: dict[Path, FileOutline | Finding] = dict(files)
        self._module_paths: dict[tuple[str, Path], Path | None] = {}
        # no unsaved buffers: the disk's listings answer which modules there are
        self._finder = finder or Finder(self.root, self._exists if sources.buffers else Listed())
        self._found: dict[Path, bool] = {}  # whether a file exists: asked thousands of times over
        self._members: dict[tuple[Path, tuple[str, ...]], _Target] = {}
        self._is_module: dict[_Class, bool] = {}
        self._forwards: dict[_Class, Forward | None] = {}

    def discover(self, paths: list[Path]) -> Discovery:
        discovery = Discovery()
        for path in paths:
            file = self.scan(path)
            if isinstance(file, Finding):
                discovery.findings.append(file)
            elif file is not None:
                discovery.modules += self.modules_in(file)
        discovery.modules.sort(key=lambda m: (m.path, m.span.line))
        discovery.findings.sort(key=lambda f: (f.path, f.line))
        return discovery

    @property
    def files(self) -> Mapping[Path, FileOutline | Finding]:
        """Every file parsed so far."""
        return self._files

    def scan(self, path: Path) -> FileOutline | Finding | None:
        """A file to report on; None when it defines no class and parses."""
        if path in self._files:
            return self._files[path]
        text = self.read(path)
        if isinstance(text, Finding) or _CLASS.search(text):
            return self.load(path, text)
        return self.problem(path, text)  # nothing to find: its syntax is all there is to say

    def problem(self, path: Path, text: str | Finding) -> Finding | None:
        """The file's encoding or syntax error (a whole parse's), if any."""
        if isinstance(text, Finding):
            return text
        error = python_syntax_error(text)
        return syntax_finding(self.sources.rel(path), error) if error else None

    def load(self, path: Path, text: str | Finding | None = None) -> FileOutline | Finding:
        if path not in self._files:
            self._files[path] = self._parse(path, self.read(path) if text is None else text)
        return self._files[path]

    def is_module(self, target: _Class) -> bool:
        if target not in self._is_module:
            self._is_module[target] = False  # a cycle through the bases (broken code) must end
            found = self._class(target)
            bases = (self._resolve(found[0], r) for base in found[1].bases for r in base.refs) if found else ()
            self._is_module[target] = any(self._is_module_target(t) for t in bases)
        return self._is_module[target]

    def modules_in(self, file: FileOutline) -> list[ModuleClass]:
        return [self._module_class(file, c) for c in file.classes.values() if self.is_module((file.path, c.qualname))]

    def _module_class(self, file: FileOutline, cls: ClassOutline) -> ModuleClass:
        bases = tuple(self._base_name(file, b) for b in cls.bases)
        return file.module_class(cls, bases, self._forward((file.path, cls.qualname)))

    # -- resolution

    def _resolve(self, file: FileOutline, ref: Ref) -> _Target:
        if ref.local:
            return (file.path, ref.name) if file.nested(ref.name) else None
        return self._follow(ref.name, file.path.parent)

    def _follow(self, name: str, near: Path) -> _Target:
        """The class an absolute name denotes, following re-exports (``__init__.py`` and the like)."""
        if name.startswith("torch.") or "." not in name:
            return name
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):  # the longest prefix that is a project module; the rest is in it
            path = self._module_path(".".join(parts[:i]), near)
            if path is not None:
                return self._member(path, tuple(parts[i:]))
        return name  # outside the project

    def _member(self, path: Path, attrs: tuple[str, ...]) -> _Target:
        """The class ``attrs`` (``Outer.Inner``) names in a module: defined there, imported, or
        star-imported. Each lookup is made once: a package's star imports can reach thousands of files."""
        key = (path, attrs)
        if key not in self._members:
            self._members[key] = None  # a re-export cycle must end
            file = self.load(path)
            self._members[key] = None if isinstance(file, Finding) else self._lookup(file, attrs)
        return self._members[key]

    def _lookup(self, file: FileOutline, attrs: tuple[str, ...]) -> _Target:
        if attrs[0] in file.classes:
            qualname = ".".join(attrs)
            return (file.path, qualname) if file.nested(qualname) else None
        rest = "".join(f".{a}" for a in attrs[1:])
        imported = (self._follow(other + rest, file.path.parent) for other in file.imports.get(attrs[0], ()))
        found = next((t for t in imported if t is not None), None)
        return found if found is not None else self._starred(file, attrs)

    def _starred(self, file: FileOutline, attrs: tuple[str, ...]) -> _Target:
        """What the file's star imports bind to ``attrs``: the last that binds it wins, so the
        first, from the end, that names a module class; a star module not there binds nothing."""
        for module in reversed(file.stars):
            path = self._module_path(module, file.path.parent)
            target = self._member(path, attrs) if path else ".".join((module, *attrs))
            if self._is_module_target(target):
                return target
        return None

    def _class(self, target: _Class) -> tuple[FileOutline, ClassOutline] | None:
        file = self.load(target[0])
        if isinstance(file, Finding):
            return None
        cls = file.nested(target[1])
        return (file, cls) if cls else None

    def _module_path(self, module: str, near: Path) -> Path | None:
        """The file of a dotted module name, found where ``packages.search_folders`` says."""
        key = (module, near)
        if key not in self._module_paths:
            self._module_paths[key] = self._finder.module_file(module, near)
        return self._module_paths[key]

    def _exists(self, path: Path) -> bool:
        if path not in self._found:
            self._found[path] = self.sources.exists(path)
        return self._found[path]

    def _is_module_target(self, target: _Target) -> bool:
        if isinstance(target, str):
            return _is_torch_module(target)
        return target is not None and self.is_module(target)

    def _base_name(self, file: FileOutline, base: BaseOutline) -> str:
        """The qualified name shown for a base: the one that makes it a module, if any."""
        if not base.refs:
            return base.text
        chosen = next((r for r in base.refs if self._is_module_target(self._resolve(file, r))), base.refs[0])
        if chosen.local and file.module:
            return f"{file.module}.{chosen.name}"
        return chosen.name

    def _forward(self, target: _Class) -> Forward | None:
        """The class's own forward, else the first project base's (depth-first, left to right)."""
        if target not in self._forwards:
            self._forwards[target] = None  # a cycle through the bases (broken code) must end
            found = self._class(target)
            self._forwards[target] = self._own_or_inherited_forward(*found) if found else None
        return self._forwards[target]

    def _own_or_inherited_forward(self, file: FileOutline, cls: ClassOutline) -> Forward | None:
        if "forward" in cls.methods:
            return cls.forward
        for ref in (r for base in cls.bases for r in base.refs):
            target = self._resolve(file, ref)
            found = self._forward(target) if isinstance(target, tuple) else None
            if found:
                return found
        return None

    # -- parsing

    def read(self, path: Path) -> str | Finding:
        try:
            return self.sources.decode(path)
        except UnicodeDecodeError as e:
            return decode_finding(e, self.sources.rel(path))
        except SyntaxError as e:  # a coding cookie Python does not know
            return codes.finding(codes.SYNTAX_ERROR, str(e.msg), self.sources.rel(path), e.lineno or 1)
        except OSError as e:
            return codes.finding(codes.SYNTAX_ERROR, f"cannot read file: {e.strerror or e}", self.sources.rel(path), 1)

    def _parse(self, path: Path, text: str | Finding) -> FileOutline | Finding:
        if isinstance(text, Finding):  # a text that could not be read is its own problem
            return text
        rel = self.sources.rel(path)
        module, package = dotted_names(name_base(path, self.root, self._exists), path)
        # checked, the file is parsed whole: that parse is its syntax check too, one parse, not two
        whole = self.checked and path not in self.sound
        parse = outline.parse_skeleton if self.skeletons and not whole else outline.parse
        try:
            return parse(text, path, rel, module, package)
        except (SyntaxError, ValueError):
            return syntax_finding(rel, python_syntax_error(text))
        except TOO_DEEP as e:
            return syntax_finding(rel, too_deep(e))


def _is_torch_module(name: str) -> bool:
    """Any class under ``torch.nn`` but the few that are not modules."""
    if not name.startswith("torch.nn.") or name.startswith(_TORCH_NN_NOT_MODULES):
        return False
    last = name.rpartition(".")[2]
    return last[:1].isupper() and last not in _TORCH_NN_TENSORS


_TORCH_NN_NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.attention.")
_TORCH_NN_TENSORS = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})
