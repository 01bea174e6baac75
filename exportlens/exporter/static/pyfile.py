"""One Python file, parsed with libcst: its top-level classes, what its imports bind,
and the positions of what is reported (no torch)."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import libcst as cst
from libcst.helpers import ModuleNameAndPackage, get_full_name_for_node
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
from ..core.targets import Forward, ModuleClass, Param, Span


def code_span(r: CodeRange) -> Span:
    """The one place that converts: libcst columns are 0-based, ours 1-based."""
    return Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)


EXAMPLE_METHODS = ("example_inputs", "get_example_inputs")  # in order of preference


# -- the file --------------------------------------------------------------------


@dataclass(frozen=True)
class PyBase:
    text: str  # the base as written
    # IMPORT names absolute; LOCAL names relative to the file (``Outer.Inner``); a name that
    # only a star import can bind, one IMPORT name per star import, the last first
    names: tuple[QualifiedName, ...]


@dataclass(frozen=True)
class PyClass:
    node: cst.ClassDef
    bases: tuple[PyBase, ...]
    defs: Mapping[str, cst.FunctionDef]  # its methods; the last definition wins, as at runtime
    attributes: frozenset[str]  # names assigned in its body
    nested: Mapping[str, PyClass]  # classes defined in its body: bases, never modules of their own
    qualname: str  # ``Outer.Inner`` for a nested class

    @property
    def name(self) -> str:
        return self.node.name.value


class PyFile:
    """A parsed file: its top-level classes, and the names its imports bind (for re-exports).

    Positions cost more than parsing, so they are computed only for files that
    have something to report.
    """

    def __init__(self, path: Path, rel: str, names: ModuleNameAndPackage, tree: cst.Module) -> None:
        self.path = path
        self.rel = rel
        self.module = names.name  # dotted, from its package chain (packages.name_base)
        self.package = names.package
        self.tree = tree
        statements = list(_module_level(tree))
        self._scope = scope = _module_scope(statements)
        # ``from x import *`` binds names libcst's scope cannot know: the modules, absolute, in order
        stars = (
            self._absolute(_star_module(s)) for s in statements if isinstance(s, cst.ImportFrom) and isinstance(s.names, cst.ImportStar)
        )
        self.stars = tuple(q.name for q in stars if q and q.name)
        # bound by an assignment or a def, which the scope's outline leaves out: no star import binds these
        self.assigned = frozenset(n for s in statements for n in ([s.name.value] if isinstance(s, cst.FunctionDef) else _assigned(s)))
        self.classes = {s.name.value: self._class(s, scope, "") for s in statements if isinstance(s, cst.ClassDef)}
        imported = {a.name for a in scope.assignments if isinstance(a, ImportAssignment)}
        self.imports = {name: self._imported(scope, name) for name in imported}

    def module_class(self, cls: PyClass, bases: tuple[str, ...], forward: Forward | None) -> ModuleClass:
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

    def forward(self, cls: PyClass) -> Forward | None:
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
        return code_span(self._positions[node])

    @cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(PositionProvider)

    def _class(self, node: cst.ClassDef, scope: Scope, outer: str) -> PyClass:
        defs, attributes = _members(node.body)
        bases = tuple(self._base(arg.value, scope) for arg in node.bases if not arg.star)
        qualname = f"{outer}{node.name.value}"
        inner = [s for s in node.body.body if isinstance(s, cst.ClassDef)]
        nested = {s.name.value: self._class(s, scope, f"{qualname}.") for s in inner}
        return PyClass(node, bases, defs, frozenset(attributes), nested, qualname)

    def _base(self, expr: cst.BaseExpression, scope: Scope) -> PyBase:
        text = self.tree.code_for_node(expr)
        if isinstance(expr, cst.Subscript):
            expr = expr.value  # a generic base, ``Base[T]``: the class is the subscripted one
        qnames = [q for q in map(self._absolute, scope.get_qualified_names_for(expr)) if q]
        if qnames:
            return PyBase(text, tuple(sorted(qnames, key=lambda q: q.name)))
        dotted = get_full_name_for_node(expr)  # unbound: a star import may bind it
        bound = not dotted or dotted.partition(".")[0] in self.assigned
        stars = () if bound else reversed(self.stars)  # the last star import binding a name wins
        return PyBase(text, tuple(QualifiedName(f"{m}.{dotted}", QualifiedNameSource.IMPORT) for m in stars))

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
        return replace(q, name=f"{bits[0]}.{rest}" if rest else bits[0])  # ``from . import *``: the package

    def _param(self, param: cst.Param, kind: str) -> Param:
        node = param.annotation.annotation if param.annotation else None
        annotation = self.tree.code_for_node(node) if node else None
        if not isinstance(node, cst.Subscript):
            return Param(param.name.value, kind, param.default is not None, annotation)
        # a shape annotation (jaxtyping's ``Float[Tensor, "b 3"]``) is a spec: where its head comes from, and its place
        heads = sorted(q.name for q in map(self._absolute, self._scope.get_qualified_names_for(node.value)) if q)
        return Param(param.name.value, kind, param.default is not None, annotation, heads[0] if heads else None, self.span(node))


def _module_level(node: cst.CSTNode, typing_only: bool = False) -> Iterator[cst.CSTNode]:
    """The statements run at import time: the module's own, and those in its if / try / with
    blocks. Under ``if TYPE_CHECKING:`` only the imports: they tell where a name comes from,
    but a class defined there never exists at runtime."""
    for child in node.children:
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.BaseSmallStatement)):
            if not typing_only or isinstance(child, (cst.Import, cst.ImportFrom)):
                yield child
        elif isinstance(child, cst.If) and get_full_name_for_node(child.test) in _TYPE_CHECKING:
            yield from _module_level(child.body, True)
            yield from _module_level(child.orelse, typing_only) if child.orelse else ()
        elif not isinstance(child, cst.BaseExpression):
            yield from _module_level(child, typing_only)


_TYPE_CHECKING = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING"})


def _star_module(node: cst.ImportFrom) -> QualifiedName:
    """The module a star import names, as written (``..x``: relative)."""
    module = get_full_name_for_node(node.module) if node.module else None
    return QualifiedName("." * len(node.relative) + (module or ""), QualifiedNameSource.IMPORT)


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
            attributes.update(_assigned(small))
    return defs, attributes


def _assigned(statement: cst.CSTNode) -> list[str]:
    """The plain names an assignment binds (``x = ...``, ``x: T = ...``)."""
    if isinstance(statement, cst.Assign):
        targets = [t.target for t in statement.targets]
    else:
        targets = [statement.target] if isinstance(statement, cst.AnnAssign) else []
    return [t.value for t in targets if isinstance(t, cst.Name)]


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


# -- findings --------------------------------------------------------------------


def python_syntax_error(text: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: not ours to report
            ast.parse(text)
    except SyntaxError as e:
        return e
    except ValueError:  # null bytes
        return SyntaxError("source code cannot contain null bytes")
    return None


def syntax_finding(rel: str, error: SyntaxError | None, cst_error: cst.ParserSyntaxError | None = None) -> Finding:
    """Placed where Python's own parser puts it: libcst's native parser is often a token or a line late.

    libcst's account goes in ``detail``, and is the finding only where Python
    accepts the file (syntax newer than libcst knows).
    """
    line, column, message = 1, 1, "invalid syntax"
    if cst_error:
        at = CodePosition(cst_error.raw_line, cst_error.raw_column)
        start = code_span(CodeRange(at, at))
        line, column, message = start.line, start.column, cst_error.message.splitlines()[0]
    if error:
        line, column, message = error.lineno or line, error.offset or column, error.msg
    detail = str(cst_error) if cst_error else ""
    message = f"syntax error: {message}"
    return codes.finding(codes.SYNTAX_ERROR, message, rel, max(line, 1), column=max(column, 1), detail=detail)


def decode_finding(error: UnicodeDecodeError, rel: str) -> Finding:
    data = error.object
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - data.rfind(b"\n", 0, error.start)  # in bytes, 1-based
    encoding = "UTF-8" if error.encoding.replace("-", "").startswith("utf8") else error.encoding
    message = f"file is not valid {encoding}: {error.reason} (byte {data[error.start]:#04x})"
    return codes.finding(codes.SYNTAX_ERROR, message, rel, line, column=column)
