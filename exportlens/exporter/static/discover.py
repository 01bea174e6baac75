"""Find nn.Module classes statically (libcst, no torch import).

A class is a module when one of its bases resolves to ``torch.nn.Module`` or any
class under ``torch.nn`` (``nn.Sequential``, ``nn.Linear``, ...), through any
import alias, or to another class in the project that is one (across files).
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import libcst as cst
from libcst.helpers import ModuleNameAndPackage, calculate_module_and_package
from libcst.metadata import (
    CodePosition,
    CodeRange,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    QualifiedNameSource,
    Scope,
    ScopeProvider,
)

from ..core import codes
from ..core.report import Finding


@dataclass(frozen=True)
class Span:
    """1-based lines and columns; end_column exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "positional_only" | "positional" | "var_positional" | "keyword_only" | "var_keyword"
    has_default: bool = False
    annotation: str | None = None  # source text of the annotation


@dataclass(frozen=True)
class Forward:
    params: tuple[Param, ...]  # without self
    span: Span  # the whole def statement
    name_span: Span  # the word "forward"
    body_lines: tuple[int, int]  # first and last line of the body


@dataclass(frozen=True)
class ModuleClass:
    path: str  # relative to the project root, POSIX
    name: str
    span: Span  # the whole class statement
    name_span: Span  # the class name
    bases: tuple[str, ...]  # qualified names of the bases as written/resolved
    forward: Forward | None  # inherited from a project base (spans then in its file); None when only torch defines it
    example_method: str | None = None  # "example_inputs" | "get_example_inputs"
    example_span: Span | None = None
    has_dynamic_shapes: bool = False  # a `dynamic_shapes` attribute/method beside example_inputs

    @property
    def target(self) -> str:
        return f"{self.path}:{self.name}"


@dataclass
class Discovery:
    modules: list[ModuleClass] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # syntax errors (EL401)


# -- public entry point ----------------------------------------------------------

SKIP_DIRS = frozenset({"__pycache__", ".venv", "venv", "node_modules", "build", "dist", "site-packages"})
EXAMPLE_METHODS = ("example_inputs", "get_example_inputs")  # in order of preference


def discover(
    root: Path,
    paths: Iterable[Path] | None = None,
    sources: Mapping[Path, str] | None = None,
) -> Discovery:
    """The nn.Module classes defined in ``paths`` (files or folders; default: all of ``root``).

    Relative ``paths`` are taken from the current directory, as ``Path`` does.
    ``sources`` overrides file text (unsaved editor buffers), keyed by absolute path.
    Bases are resolved through the files under ``root`` that scanned files import,
    parsed on demand; only scanned files report syntax errors.
    """
    overrides = {Path(p).resolve(): text for p, text in (sources or {}).items()}
    project = _Project(Path(root).resolve(), overrides)
    discovery = Discovery()
    for path in _python_files(project.root, paths, overrides):
        file = project.scan(path)
        if isinstance(file, Finding):
            discovery.findings.append(file)
        elif file is not None:
            discovery.modules += project.modules_in(file)
    discovery.modules.sort(key=lambda m: (m.path, m.span.line))
    discovery.findings.sort(key=lambda f: (f.path, f.line))
    return discovery


# -- positions -------------------------------------------------------------------


def _span(r: CodeRange) -> Span:
    """The one place that converts: libcst columns are 0-based, ours 1-based."""
    return Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)


# -- which files -----------------------------------------------------------------


def _python_files(root: Path, paths: Iterable[Path] | None, overrides: Mapping[Path, str]) -> list[Path]:
    """Absolute paths of the ``*.py`` files to scan, sorted, each once."""
    found: set[Path] = set()
    folders: list[Path] = []
    for given in [root] if paths is None else paths:
        path = Path(given).resolve()
        if path.is_dir():
            folders.append(path)
            found.update(_walk(path))
        elif path.suffix == ".py" and (path in overrides or path.is_file()):
            found.add(path)
    # an unsaved new buffer inside a scanned folder is scanned too
    found.update(p for p in overrides if p.suffix == ".py" and any(_inside(p, f) for f in folders))
    return sorted(found)


def _walk(folder: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not _skipped(d)]
        yield from (Path(dirpath, name) for name in filenames if name.endswith(".py"))


def _skipped(dirname: str) -> bool:
    return dirname.startswith(".") or dirname in SKIP_DIRS


def _inside(path: Path, folder: Path) -> bool:
    """``path`` lies under ``folder`` and in no folder the walk would skip."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return False
    return not any(_skipped(d) for d in parts[:-1])


# -- one file --------------------------------------------------------------------


@dataclass(frozen=True)
class _Base:
    text: str  # the base as written
    names: tuple[QualifiedName, ...]  # IMPORT names absolute; LOCAL names relative to the file


@dataclass(frozen=True)
class _Class:
    node: cst.ClassDef
    bases: tuple[_Base, ...]
    defs: Mapping[str, cst.FunctionDef]  # its methods; the last definition wins, as at runtime
    attributes: frozenset[str]  # names assigned in its body

    @property
    def name(self) -> str:
        return self.node.name.value


class _File:
    """A parsed file: its top-level classes, and the names its imports bind (for re-exports).

    Positions cost more than parsing, so they are computed only for files that
    have something to report.
    """

    def __init__(self, path: Path, rel: str, names: ModuleNameAndPackage, tree: cst.Module) -> None:
        self.path = path
        self.rel = rel
        self.module = names.name  # dotted, relative to the project root
        self.package = names.package
        self.tree = tree
        statements = list(_module_level(tree))
        scope = _module_scope(statements)
        self.classes = {s.name.value: self._class(s, scope) for s in statements if isinstance(s, cst.ClassDef)}
        imported = {a.name for a in scope.assignments if isinstance(a, ImportAssignment)}
        self.imports = {name: self._imported(scope, name) for name in imported}

    def module_class(self, cls: _Class, bases: tuple[str, ...], forward: Forward | None) -> ModuleClass:
        example = next((name for name in EXAMPLE_METHODS if name in cls.defs), None)
        return ModuleClass(
            path=self.rel,
            name=cls.name,
            span=self.span(cls.node),
            name_span=self.span(cls.node.name),
            bases=bases,
            forward=forward,
            example_method=example,
            example_span=self.span(cls.defs[example].name) if example else None,
            has_dynamic_shapes="dynamic_shapes" in cls.defs or "dynamic_shapes" in cls.attributes,
        )

    def forward(self, cls: _Class) -> Forward | None:
        node = cls.defs.get("forward")
        if node is None:
            return None
        statements = node.body.body
        return Forward(
            params=_without_self([self._param(param, kind) for kind, param in _params(node.params)]),
            span=self.span(node),
            name_span=self.span(node.name),
            body_lines=(self.span(statements[0]).line, self.span(statements[-1]).end_line),
        )

    def span(self, node: cst.CSTNode) -> Span:
        return _span(self._positions[node])

    @cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(PositionProvider)

    def _class(self, node: cst.ClassDef, scope: Scope) -> _Class:
        defs, attributes = _members(node.body)
        bases = tuple(self._base(arg.value, scope) for arg in node.bases if not arg.star)
        return _Class(node, bases, defs, frozenset(attributes))

    def _base(self, expr: cst.BaseExpression, scope: Scope) -> _Base:
        text = self.tree.code_for_node(expr)
        if isinstance(expr, cst.Subscript):
            expr = expr.value  # a generic base, ``Base[T]``: the class is the subscripted one
        qnames = (self._absolute(q) for q in scope.get_qualified_names_for(expr))
        return _Base(text, tuple(sorted((q for q in qnames if q), key=lambda q: q.name)))

    def _imported(self, scope: Scope, name: str) -> tuple[str, ...]:
        qnames = (self._absolute(q) for q in scope.get_qualified_names_for(name))
        return tuple(sorted(q.name for q in qnames if q and q.source is QualifiedNameSource.IMPORT))

    def _absolute(self, q: QualifiedName) -> QualifiedName | None:
        """``q`` with a relative import resolved against this file's package; None when it climbs out."""
        if q.source is not QualifiedNameSource.IMPORT or not q.name.startswith("."):
            return q
        rest = q.name.lstrip(".")
        dots = len(q.name) - len(rest)
        if not self.package:
            return replace(q, name=rest)  # a file at the root: read ``.x`` as ``x``, as a script would
        bits = self.package.rsplit(".", dots - 1)  # as importlib resolves it
        if len(bits) < dots:
            return None
        return replace(q, name=f"{bits[0]}.{rest}")

    def _param(self, param: cst.Param, kind: str) -> Param:
        annotation = self.tree.code_for_node(param.annotation.annotation) if param.annotation else None
        return Param(param.name.value, kind, param.default is not None, annotation)


def _module_level(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements run at import time: the module's own, and those in its if / try / with blocks."""
    for child in node.children:
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.BaseSmallStatement)):
            yield child
        elif not isinstance(child, cst.BaseExpression):
            yield from _module_level(child)


def _module_scope(statements: list[cst.CSTNode]) -> Scope:
    """The module scope, analysed on an outline: the imports, and a stub of each class.

    Scope analysis costs some 20 µs a node, and bases and imports need only the
    names bound at module level; libcst looks nodes up by name, so the original
    tree's nodes can be queried.
    """
    imports = [cst.SimpleStatementLine([s]) for s in statements if isinstance(s, (cst.Import, cst.ImportFrom))]
    classes = [s for s in statements if isinstance(s, cst.ClassDef)]
    stubs = [cst.ClassDef(cst.Name(c.name.value), cst.SimpleStatementSuite([cst.Pass()])) for c in classes]
    outline = cst.Module(body=[*imports, *stubs])
    return MetadataWrapper(outline, unsafe_skip_copy=True).resolve(ScopeProvider)[outline]


def _members(body: cst.BaseSuite) -> tuple[dict[str, cst.FunctionDef], set[str]]:
    """A class body's methods and the names it assigns."""
    defs: dict[str, cst.FunctionDef] = {}
    attributes: set[str] = set()
    for statement in body.body:
        if isinstance(statement, cst.FunctionDef):
            defs[statement.name.value] = statement
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]:
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            else:
                targets = [small.target] if isinstance(small, cst.AnnAssign) else []
            attributes.update(t.value for t in targets if isinstance(t, cst.Name))
    return defs, attributes


def _params(p: cst.Parameters) -> Iterator[tuple[str, cst.Param]]:
    """Each parameter with its kind, in order (a bare ``*`` is no parameter)."""
    yield from (("positional_only", param) for param in p.posonly_params)
    yield from (("positional", param) for param in p.params)
    if isinstance(p.star_arg, cst.Param):
        yield "var_positional", p.star_arg
    yield from (("keyword_only", param) for param in p.kwonly_params)
    if p.star_kwarg:
        yield "var_keyword", p.star_kwarg


def _without_self(params: list[Param]) -> tuple[Param, ...]:
    if params and params[0].kind in ("positional_only", "positional"):
        return tuple(params[1:])
    return tuple(params)


# -- the project: files parsed on demand, bases resolved across them ------------------

_CLASS = re.compile(r"^[ \t\f]*class\b", re.MULTILINE)  # a class statement starts its line
_Target = tuple[_File, _Class] | str | None  # a project class, a name outside the project, or nothing


class _Project:
    def __init__(self, root: Path, overrides: Mapping[Path, str]) -> None:
        self.root = root
        self.overrides = overrides
        self._files: dict[Path, _File | Finding] = {}
        self._module_paths: dict[tuple[str, Path], Path | None] = {}
        self._is_module: dict[tuple[Path, str], bool] = {}
        self._forwards: dict[tuple[Path, str], Forward | None] = {}

    def scan(self, path: Path) -> _File | Finding | None:
        """A file to report on; None when it defines no class and parses."""
        text = self._read(path)
        if isinstance(text, Finding) or _CLASS.search(text):
            return self.load(path, text)
        # nothing to find: Python's parser checks the syntax some 15 times faster than libcst's
        error = _python_syntax_error(text)
        return _syntax_finding(self._rel(path), error) if error else None

    def load(self, path: Path, text: str | Finding | None = None) -> _File | Finding:
        if path not in self._files:
            self._files[path] = self._parse(path, self._read(path) if text is None else text)
        return self._files[path]

    def is_module(self, file: _File, cls: _Class) -> bool:
        key = (file.path, cls.name)
        if key not in self._is_module:
            self._is_module[key] = False  # a cycle through the bases (broken code) must end
            targets = (self._resolve(file, q) for base in cls.bases for q in base.names)
            self._is_module[key] = any(self._is_module_target(t) for t in targets)
        return self._is_module[key]

    def modules_in(self, file: _File) -> list[ModuleClass]:
        return [self._module_class(file, c) for c in file.classes.values() if self.is_module(file, c)]

    def _module_class(self, file: _File, cls: _Class) -> ModuleClass:
        bases = tuple(self._base_name(file, b) for b in cls.bases)
        return file.module_class(cls, bases, self._forward(file, cls))

    # -- resolution

    def _resolve(self, file: _File, q: QualifiedName) -> _Target:
        if q.source is QualifiedNameSource.LOCAL:
            cls = file.classes.get(q.name)
            return (file, cls) if cls else None
        if q.source is QualifiedNameSource.IMPORT:
            return self._follow(q.name, file.path.parent, frozenset())
        return None  # builtins such as ``object``

    def _follow(self, name: str, near: Path, seen: frozenset[str]) -> _Target:
        """The class an absolute name denotes, following re-exports (``__init__.py`` and the like)."""
        module, _, attr = name.rpartition(".")
        if name.startswith("torch.") or not module:
            return name
        if name in seen:
            return None  # a re-export cycle
        path = self._module_path(module, near)
        if path is None:
            return name
        file = self.load(path)
        if isinstance(file, Finding):
            return None
        if attr in file.classes:
            return file, file.classes[attr]
        for other in file.imports.get(attr, ()):
            target = self._follow(other, path.parent, seen | {name})
            if target is not None:
                return target
        return None

    def _module_path(self, module: str, near: Path) -> Path | None:
        """The file of a dotted module name: under the root, its ``src/``, or beside the importer (script style)."""
        key = (module, near)
        if key not in self._module_paths:
            *parents, last = module.split(".")
            candidates = [
                candidate
                for folder in (self.root, self.root / "src", near)
                for candidate in (folder.joinpath(*parents, last, "__init__.py"), folder.joinpath(*parents, last + ".py"))
            ]  # a package before a module of the same name, as Python does
            self._module_paths[key] = next((c for c in candidates if c in self.overrides or c.is_file()), None)
        return self._module_paths[key]

    def _is_module_target(self, target: _Target) -> bool:
        if isinstance(target, str):
            return _is_torch_module(target)
        return target is not None and self.is_module(*target)

    def _base_name(self, file: _File, base: _Base) -> str:
        """The qualified name shown for a base: the one that makes it a module, if any."""
        if not base.names:
            return base.text
        chosen = next((q for q in base.names if self._is_module_target(self._resolve(file, q))), base.names[0])
        if chosen.source is QualifiedNameSource.LOCAL and file.module:
            return f"{file.module}.{chosen.name}"
        return chosen.name

    def _forward(self, file: _File, cls: _Class) -> Forward | None:
        """The class's own forward, else the first project base's (depth-first, left to right)."""
        key = (file.path, cls.name)
        if key not in self._forwards:
            self._forwards[key] = None  # a cycle through the bases (broken code) must end
            self._forwards[key] = file.forward(cls) if "forward" in cls.defs else self._inherited_forward(file, cls)
        return self._forwards[key]

    def _inherited_forward(self, file: _File, cls: _Class) -> Forward | None:
        for q in (q for base in cls.bases for q in base.names):
            target = self._resolve(file, q)
            found = self._forward(*target) if isinstance(target, tuple) else None
            if found:
                return found
        return None

    # -- parsing

    def _read(self, path: Path) -> str | Finding:
        try:
            return self.overrides[path] if path in self.overrides else path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as e:
            return _decode_finding(e, self._rel(path))
        except OSError as e:
            return codes.finding(codes.SYNTAX_ERROR, f"cannot read file: {e.strerror or e}", self._rel(path), 1)

    def _parse(self, path: Path, text: str | Finding) -> _File | Finding:
        if isinstance(text, Finding):
            return text
        try:
            tree = cst.parse_module(text)
        except cst.ParserSyntaxError as e:
            return _syntax_finding(self._rel(path), _python_syntax_error(text), e)
        names = calculate_module_and_package(self.root if _inside(path, self.root) else path.parent, path)
        return _File(path, self._rel(path), names, tree)

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def _is_torch_module(name: str) -> bool:
    """Any class under ``torch.nn`` but the few that are not modules."""
    if not name.startswith("torch.nn.") or name.startswith(_TORCH_NN_NOT_MODULES):
        return False
    last = name.rpartition(".")[2]
    return last[:1].isupper() and last not in _TORCH_NN_TENSORS


_TORCH_NN_NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.attention.")
_TORCH_NN_TENSORS = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})


# -- findings --------------------------------------------------------------------


def _python_syntax_error(text: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: not ours to report
            ast.parse(text)
    except SyntaxError as e:
        return e
    except ValueError:  # null bytes
        return SyntaxError("source code cannot contain null bytes")
    return None


def _syntax_finding(rel: str, error: SyntaxError | None, cst_error: cst.ParserSyntaxError | None = None) -> Finding:
    """Placed where Python's own parser puts it: libcst's native parser is often a token or a line late.

    libcst's account goes in ``detail``, and is the finding only where Python
    accepts the file (syntax newer than libcst knows).
    """
    line, column, message = 1, 1, "invalid syntax"
    if cst_error:
        at = CodePosition(cst_error.raw_line, cst_error.raw_column)
        start = _span(CodeRange(at, at))
        line, column, message = start.line, start.column, cst_error.message.splitlines()[0]
    if error:
        line, column, message = error.lineno or line, error.offset or column, error.msg
    detail = str(cst_error) if cst_error else ""
    message = f"syntax error: {message}"
    return codes.finding(codes.SYNTAX_ERROR, message, rel, max(line, 1), column=max(column, 1), detail=detail)


def _decode_finding(error: UnicodeDecodeError, rel: str) -> Finding:
    data = error.object
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - data.rfind(b"\n", 0, error.start)  # in bytes, 1-based
    message = f"file is not valid UTF-8: {error.reason} (byte {data[error.start]:#04x})"
    return codes.finding(codes.SYNTAX_ERROR, message, rel, line, column=column)
