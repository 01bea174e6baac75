"""Find nn.Module classes statically (libcst, no torch import).

A class is a module when one of its bases resolves to ``torch.nn.Module`` or any
class under ``torch.nn`` (``nn.Sequential``, ``nn.Linear``, ...), through any
import alias, or to another class in the project that is one (across files).
"""

from __future__ import annotations

import ast
import os
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Union

import libcst as cst
from libcst.helpers import ModuleNameAndPackage, calculate_module_and_package
from libcst.metadata import (
    CodePosition,
    CodeRange,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from . import codes
from .report import Finding


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

    ``sources`` overrides file text (unsaved editor buffers), keyed by absolute path.
    Bases are resolved through files under ``root`` that the scanned files import,
    parsed on demand; only scanned files report syntax errors.
    """
    overrides = {Path(p).resolve(): text for p, text in (sources or {}).items()}
    project = _Project(Path(root).resolve(), overrides)
    discovery = Discovery()
    for path in _python_files(project.root, paths, overrides):
        loaded = project.load(path)
        if isinstance(loaded, Finding):
            discovery.findings.append(loaded)
            continue
        discovery.modules += [project.module_class(loaded, c) for c in loaded.classes.values() if project.is_module(loaded, c)]
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
    draft: ModuleClass  # without bases, and forward only when defined in the class itself
    bases: tuple[_Base, ...]


@dataclass(frozen=True)
class _File:
    path: Path
    rel: str
    module: str  # dotted module name relative to the project root
    classes: dict[str, _Class]  # top-level classes, by name
    imports: dict[str, tuple[str, ...]]  # top-level names bound by imports -> absolute names (for re-exports)


class _FileVisitor(cst.CSTVisitor):
    """Collects a file's top-level classes and the names its imports bind."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ScopeProvider)

    def __init__(self, module: cst.Module, rel: str, names: ModuleNameAndPackage) -> None:
        super().__init__()
        self.module = module
        self.rel = rel
        self.names = names
        self.classes: dict[str, _Class] = {}
        self.imports: dict[str, tuple[str, ...]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        scope = self.get_metadata(ScopeProvider, node)
        for assignment in scope.assignments:
            if isinstance(assignment, ImportAssignment):
                qnames = (self._absolute(q) for q in scope.get_qualified_names_for(assignment.name))
                self.imports[assignment.name] = tuple(sorted(q.name for q in qnames if q and q.source is QualifiedNameSource.IMPORT))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a function's local classes cannot be constructed by name

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.classes[node.name.value] = self._class(node)
        return False  # nested classes are not discovered

    def _class(self, node: cst.ClassDef) -> _Class:
        defs, attributes = _members(node.body)
        example = next((name for name in EXAMPLE_METHODS if name in defs), None)
        draft = ModuleClass(
            path=self.rel,
            name=node.name.value,
            span=self._span(node),
            name_span=self._span(node.name),
            bases=(),
            forward=self._forward(defs["forward"]) if "forward" in defs else None,
            example_method=example,
            example_span=self._span(defs[example].name) if example else None,
            has_dynamic_shapes="dynamic_shapes" in defs or "dynamic_shapes" in attributes,
        )
        return _Class(draft, tuple(self._base(arg.value) for arg in node.bases if not arg.star))

    def _base(self, expr: cst.BaseExpression) -> _Base:
        text = self.module.code_for_node(expr)
        if isinstance(expr, cst.Subscript):
            expr = expr.value  # a generic base, e.g. ``Base[T]``: its class is the subscripted one
        qnames = (self._absolute(q) for q in self.get_metadata(QualifiedNameProvider, expr, set()))
        return _Base(text, tuple(sorted((q for q in qnames if q), key=lambda q: q.name)))

    def _forward(self, node: cst.FunctionDef) -> Forward:
        statements = node.body.body
        return Forward(
            params=_without_self(self._params(node.params)),
            span=self._span(node),
            name_span=self._span(node.name),
            body_lines=(self._span(statements[0]).line, self._span(statements[-1]).end_line),
        )

    def _params(self, p: cst.Parameters) -> list[Param]:
        groups = [
            ("positional_only", p.posonly_params),
            ("positional", p.params),
            ("var_positional", [p.star_arg] if isinstance(p.star_arg, cst.Param) else []),
            ("keyword_only", p.kwonly_params),
            ("var_keyword", [p.star_kwarg] if p.star_kwarg else []),
        ]
        return [self._param(param, kind) for kind, params in groups for param in params]

    def _param(self, param: cst.Param, kind: str) -> Param:
        annotation = self.module.code_for_node(param.annotation.annotation) if param.annotation else None
        return Param(param.name.value, kind, param.default is not None, annotation)

    def _absolute(self, q: QualifiedName) -> QualifiedName | None:
        """``q`` with a relative import resolved against this file's package; None when it climbs out."""
        if q.source is not QualifiedNameSource.IMPORT or not q.name.startswith("."):
            return q
        rest = q.name.lstrip(".")
        dots = len(q.name) - len(rest)
        if not self.names.package:
            return replace(q, name=rest)  # a file at the root: read ``.x`` as ``x``, as a script would
        bits = self.names.package.rsplit(".", dots - 1)  # as importlib resolves it
        if len(bits) < dots:
            return None
        return replace(q, name=f"{bits[0]}.{rest}")

    def _span(self, node: cst.CSTNode) -> Span:
        return _span(self.get_metadata(PositionProvider, node))


def _members(body: cst.BaseSuite) -> tuple[dict[str, cst.FunctionDef], set[str]]:
    """A class body's methods (the last definition wins, as at runtime) and assigned names."""
    defs: dict[str, cst.FunctionDef] = {}
    attributes: set[str] = set()
    for statement in body.body:
        if isinstance(statement, cst.FunctionDef):
            defs[statement.name.value] = statement
        small = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
        for s in small:
            targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target] if isinstance(s, cst.AnnAssign) else []
            attributes.update(t.value for t in targets if isinstance(t, cst.Name))
    return defs, attributes


def _without_self(params: list[Param]) -> tuple[Param, ...]:
    if params and params[0].kind in ("positional_only", "positional"):
        return tuple(params[1:])
    return tuple(params)


# -- the project: files parsed on demand, bases resolved across them ------------------

_Target = Union[tuple[_File, _Class], str, None]  # a project class, a name outside the project, or nothing


class _Project:
    def __init__(self, root: Path, overrides: Mapping[Path, str]) -> None:
        self.root = root
        self.overrides = overrides
        self._files: dict[Path, _File | Finding] = {}
        self._module_paths: dict[tuple[str, Path], Path | None] = {}
        self._is_module: dict[tuple[Path, str], bool] = {}

    def load(self, path: Path) -> _File | Finding:
        if path not in self._files:
            self._files[path] = self._parse(path)
        return self._files[path]

    def is_module(self, file: _File, cls: _Class) -> bool:
        key = (file.path, cls.draft.name)
        if key not in self._is_module:
            self._is_module[key] = False  # a cycle through the bases (broken code) must end
            self._is_module[key] = any(self._is_module_target(self._resolve(file, q)) for b in cls.bases for q in b.names)
        return self._is_module[key]

    def module_class(self, file: _File, cls: _Class) -> ModuleClass:
        bases = tuple(self._base_name(file, b) for b in cls.bases)
        return replace(cls.draft, bases=bases, forward=self._forward(file, cls, frozenset()))

    # -- resolution

    def _resolve(self, file: _File, q: QualifiedName) -> _Target:
        if q.source is QualifiedNameSource.LOCAL:
            cls = file.classes.get(q.name)
            return (file, cls) if cls else None
        if q.source is QualifiedNameSource.IMPORT:
            return self._follow(q.name, file.path.parent, frozenset())
        return None  # builtins such as ``object``

    def _follow(self, name: str, near: Path, seen: frozenset[str]) -> _Target:
        """The class an absolute name denotes, following re-exports through ``__init__.py`` and the like."""
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
                for candidate in (folder.joinpath(*parents, last, "__init__.py"), folder.joinpath(*parents, f"{last}.py"))
            ]
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

    def _forward(self, file: _File, cls: _Class, seen: frozenset[tuple[Path, str]]) -> Forward | None:
        """The class's own forward, else the first project base's (depth-first, left to right)."""
        key = (file.path, cls.draft.name)
        if cls.draft.forward or key in seen:
            return cls.draft.forward
        for q in (q for b in cls.bases for q in b.names):
            target = self._resolve(file, q)
            found = self._forward(*target, seen | {key}) if isinstance(target, tuple) else None
            if found:
                return found
        return None

    # -- parsing

    def _parse(self, path: Path) -> _File | Finding:
        rel = self._rel(path)
        try:
            text = self.overrides[path] if path in self.overrides else path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as e:
            return _decode_finding(path.read_bytes(), rel, e)
        except OSError as e:
            return codes.finding(codes.SYNTAX_ERROR, f"cannot read file: {e.strerror or e}", rel, 1)
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as e:
            return _syntax_finding(text, rel, e)
        names = calculate_module_and_package(self.root if _inside(path, self.root) else path.parent, path)
        visitor = _FileVisitor(module, rel, names)
        MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
        return _File(path, rel, names.name, visitor.classes, visitor.imports)

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def _is_torch_module(name: str) -> bool:
    """Any class under ``torch.nn`` except the few that are not modules."""
    if not name.startswith("torch.nn.") or name.startswith(_TORCH_NN_NOT_MODULES):
        return False
    last = name.rpartition(".")[2]
    return last[:1].isupper() and last not in _TORCH_NN_TENSORS


_TORCH_NN_NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.attention.")
_TORCH_NN_TENSORS = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})


# -- findings --------------------------------------------------------------------


def _syntax_finding(text: str, rel: str, error: cst.ParserSyntaxError) -> Finding:
    """Python's own parser places the error exactly; libcst's native parser often a token late.

    libcst's message goes in ``detail``; its position is used only when Python accepts
    the file (syntax newer than libcst knows).
    """
    start = _span(CodeRange(CodePosition(error.raw_line, error.raw_column), CodePosition(error.raw_line, error.raw_column)))
    line, column, message = start.line, start.column, error.message.splitlines()[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: not ours to report
            ast.parse(text)
    except SyntaxError as e:
        line, column, message = e.lineno or line, e.offset or column, e.msg
    except ValueError:
        pass  # null bytes: keep libcst's account
    return codes.finding(codes.SYNTAX_ERROR, f"syntax error: {message}", rel, max(line, 1), column=max(column, 1), detail=str(error))


def _decode_finding(data: bytes, rel: str, error: UnicodeDecodeError) -> Finding:
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - data.rfind(b"\n", 0, error.start)  # byte column, 1-based
    return codes.finding(codes.SYNTAX_ERROR, f"file is not valid UTF-8: {error.reason} (byte {data[error.start]:#04x})", rel, line, column=column)
