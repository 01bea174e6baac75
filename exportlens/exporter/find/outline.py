"""One Python file's outline, from the standard library's ``ast``: its classes, what its
imports bind, and the positions a module is reported at (no torch, no libcst).

Plain frozen data, so a scan can parse files in other processes and keep outlines in
an on-disk cache. libcst stays for what edits a file (fixes, scaffolds); finding
modules needs only names and positions, and ``ast`` gives them some 15 times faster.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.targets import Forward, ModuleClass, Param, ParamKind, Span
from .packages import absolute
from .skeleton import skeleton
from .syntax import UNPARSABLE

EXAMPLE_METHODS = ("example_inputs", "get_example_inputs")  # in order of preference
JAXTYPING = "jaxtyping"  # the package whose annotations declare shapes (spec/jaxtyping_spec.py reads them)


@dataclass(frozen=True)
class Ref:
    """What a name in a base denotes: an absolute dotted name an import gives, or a class of
    the file itself (``local``: its dotted name there, ``Outer.Inner``)."""

    name: str
    local: bool = False


@dataclass(frozen=True)
class BaseOutline:
    text: str  # the base as written
    # what it may denote, sorted; for a name only a star import can bind, one Ref per star
    # import, the last first
    refs: tuple[Ref, ...]


@dataclass(frozen=True)
class ClassOutline:
    name: str
    qualname: str  # ``Outer.Inner`` for a nested class
    span: Span  # the whole class statement, from ``class`` (as libcst places it)
    name_span: Span
    bases: tuple[BaseOutline, ...]
    methods: tuple[str, ...]  # sorted
    attributes: tuple[str, ...]  # names assigned in its body, sorted
    nested: Mapping[str, ClassOutline]  # classes defined in its body: bases, never modules of their own
    forward: Forward | None  # its own forward
    example: tuple[str, Span] | None  # its example_inputs method and the span of its name


@dataclass(frozen=True)
class FileOutline:
    path: Path
    rel: str  # relative to the project root, POSIX
    module: str  # dotted, from its package chain
    package: str
    classes: Mapping[str, ClassOutline]  # top-level classes defined at runtime
    imports: Mapping[str, tuple[str, ...]]  # a name an import binds: the absolute names, sorted
    stars: tuple[str, ...]  # the modules ``from x import *`` names, absolute, in order
    assigned: tuple[str, ...]  # bound by an assignment or a def (no star import binds these), sorted

    def module_class(self, cls: ClassOutline, bases: tuple[str, ...], forward: Forward | None) -> ModuleClass:
        heads = [p.annotation_head or "" for p in forward.params] if forward else []
        return ModuleClass(
            path=self.rel,
            name=cls.name,
            span=cls.span,
            name_span=cls.name_span,
            bases=bases,
            forward=forward,
            example_method=cls.example[0] if cls.example else None,
            example_span=cls.example[1] if cls.example else None,
            has_dynamic_shapes="dynamic_shapes" in cls.methods or "dynamic_shapes" in cls.attributes,
            jaxtyped=any(head.startswith(JAXTYPING + ".") for head in heads),
        )

    def nested(self, qualname: str) -> ClassOutline | None:
        """A class of the file by its dotted name there (``Outer.Inner``)."""
        first, *rest = qualname.split(".")
        cls = self.classes.get(first)
        for name in rest:
            cls = cls.nested.get(name) if cls else None
        return cls


def parse(text: str, path: Path, rel: str, module: str, package: str) -> FileOutline:
    """The outline of ``text``; raises what ``ast`` does (syntax.UNPARSABLE)."""
    return _Reader(text, path, rel, module, package).read(_ast(text))


def parse_skeleton(text: str, path: Path, rel: str, module: str, package: str) -> FileOutline:
    """The outline of ``text`` parsed with function bodies blanked (``skeleton``): the same
    outline, some 5 times faster, but a syntax error inside a body goes unseen. Where the
    blanked text does not parse, the whole text is parsed (and may raise as ``parse``)."""
    blanked = skeleton(text)
    try:
        tree = _ast(blanked.text)
    except UNPARSABLE:
        return parse(text, path, rel, module, package)
    return _Reader(blanked.text, path, rel, module, package, blanked.bodies).read(tree)


def _ast(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like: not ours to report
        return ast.parse(text)


class _Reader:
    def __init__(
        self,
        text: str,
        path: Path,
        rel: str,
        module: str,
        package: str,
        bodies: Mapping[int, tuple[int, int, int]] | None = None,
    ) -> None:
        self.text, self.path, self.rel, self.module, self.package = text, path, rel, module, package
        self.bodies = bodies or {}  # the blanked functions' bodies (``Skeleton.bodies``)
        self._lines: list[str] | None = None
        self.ascii = text.isascii()

    def read(self, tree: ast.Module) -> FileOutline:
        statements = list(_module_level(tree.body))
        self.bound: dict[str, list[str]] = {}  # a name an import binds: what it imports, absolute
        stars: list[str] = []
        for s in statements:
            if isinstance(s, ast.ImportFrom) and s.names[0].name == "*":
                star = self._absolute("." * s.level + (s.module or ""))
                stars += [star] if star else []
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                self._bind(s)
        self.stars = tuple(stars)
        self.assigned = tuple(sorted({n for s in statements for n in _assigned(s)}))
        self.local = {s.name for s in statements if isinstance(s, ast.ClassDef)}
        classes = {s.name: self._class(s, "") for s in statements if isinstance(s, ast.ClassDef)}
        imports = {name: tuple(sorted(set(binds))) for name, binds in self.bound.items()}
        return FileOutline(self.path, self.rel, self.module, self.package, classes, imports, self.stars, self.assigned)

    def _bind(self, s: ast.Import | ast.ImportFrom) -> None:
        for alias in s.names:
            if isinstance(s, ast.Import):
                name = alias.asname or alias.name.partition(".")[0]
                imported: str | None = alias.name if alias.asname else name  # ``import a.b`` binds ``a``, the package
            else:
                name = alias.asname or alias.name
                prefix = "." * s.level + (f"{s.module}." if s.module else "")
                imported = self._absolute(prefix + alias.name)
            if imported:
                self.bound.setdefault(name, []).append(imported)

    def _class(self, node: ast.ClassDef, outer: str) -> ClassOutline:
        qualname = f"{outer}{node.name}"
        methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        attributes: set[str] = set()
        for s in node.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods[s.name] = s  # the last definition wins, as at runtime
            attributes.update(_assigned(s))
        inner = (s for s in node.body if isinstance(s, ast.ClassDef))
        example = next((m for m in EXAMPLE_METHODS if m in methods), None)
        return ClassOutline(
            name=node.name,
            qualname=qualname,
            span=self._span(node),
            name_span=self._name_span(node),
            bases=tuple(self._base(b) for b in node.bases if not isinstance(b, ast.Starred)),
            methods=tuple(sorted(methods)),
            attributes=tuple(sorted(attributes)),
            nested={s.name: self._class(s, f"{qualname}.") for s in inner},
            forward=self._forward(methods["forward"]) if "forward" in methods else None,
            example=(example, self._name_span(methods[example])) if example else None,
        )

    def _base(self, expr: ast.expr) -> BaseOutline:
        text = self._segment(expr)
        if isinstance(expr, ast.Subscript):
            expr = expr.value  # a generic base, ``Base[T]``: the class is the subscripted one
        refs = self._refs(expr)
        if refs:
            return BaseOutline(text, refs)
        dotted = _dotted(expr)
        if dotted is None or dotted.partition(".")[0] in self.assigned:
            return BaseOutline(text, ())
        return BaseOutline(text, tuple(Ref(f"{m}.{dotted}") for m in reversed(self.stars)))

    def _refs(self, expr: ast.expr) -> tuple[Ref, ...]:
        """What a name (or ``a.b.C``) denotes through the file's imports and classes, sorted."""
        dotted = _dotted(expr)
        if dotted is None:
            return ()
        head, _, rest = dotted.partition(".")
        refs = {Ref(f"{imported}.{rest}" if rest else imported) for imported in self.bound.get(head, ())}
        if head in self.local:
            refs.add(Ref(dotted, local=True))
        return tuple(sorted(refs, key=lambda r: r.name))

    def _forward(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Forward:
        first, last = node.body[0], node.body[-1]
        return Forward(
            params=_without_self([self._param(a, kind, default) for kind, a, default in _params(node.args)]),
            span=self._span(node),
            name_span=self._name_span(node),
            body_lines=self.bodies[node.lineno][:2]
            if node.lineno in self.bodies
            else (first.lineno, last.end_lineno or last.lineno),
        )

    def _param(self, arg: ast.arg, kind: ParamKind, has_default: bool) -> Param:
        node = arg.annotation
        annotation = self._segment(node) if node else None
        if not isinstance(node, ast.Subscript):
            return Param(arg.arg, kind, has_default, annotation)
        # a shape annotation (jaxtyping's ``Float[Tensor, "b 3"]``) is a spec: where its head comes from, and its place
        heads = sorted(r.name for r in self._refs(node.value) if not r.local)
        return Param(arg.arg, kind, has_default, annotation, heads[0] if heads else None, self._span(node))

    def _absolute(self, name: str) -> str | None:
        """``name`` with a relative import resolved against this file's package; None when it climbs out."""
        return absolute(name, self.package)

    # -- positions: ast counts columns in UTF-8 bytes, a Span in characters

    def _span(self, node: ast.stmt | ast.expr) -> Span:
        line = node.lineno  # the ``class``/``def`` line: decorators are not part of the span
        end_line, end = self._end(node)
        return Span(line, self._column(node.lineno, node.col_offset) + 1, end_line, end + 1)

    def _end(self, node: ast.stmt | ast.expr) -> tuple[int, int]:
        """Where a node ends (line, column in characters); in a blanked function, where its body did."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno in self.bodies:
            _, line, column = self.bodies[node.lineno]
            return line, column
        last = max((block[-1] for block in _blocks(node) if block), key=lambda s: s.lineno, default=None)
        if last is not None and self.bodies:
            return self._end(last)
        end_line = node.end_lineno or node.lineno
        return end_line, self._column(end_line, node.end_col_offset or 0)

    def _name_span(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
        line = self._line(node.lineno)
        start = self._column(node.lineno, node.col_offset)
        found = _NAMED.search(line, start)
        column = found.start(1) if found and found.group(1) == node.name else start
        return Span(node.lineno, column + 1, node.lineno, column + len(node.name) + 1)

    def _segment(self, node: ast.expr) -> str:
        """The source text of an expression (``ast.get_source_segment`` splits the file each call)."""
        first, last = node.lineno, node.end_lineno or node.lineno
        start, end = self._column(first, node.col_offset), self._column(last, node.end_col_offset or 0)
        if first == last:
            return self._line(first)[start:end]
        middle = [self._line(n) for n in range(first + 1, last)]
        return "\n".join([self._line(first)[start:], *middle, self._line(last)[:end]])

    def _column(self, line: int, offset: int) -> int:
        if self.ascii:
            return offset
        return len(self._line(line).encode("utf-8")[:offset].decode("utf-8", "replace"))

    def _line(self, number: int) -> str:
        if self._lines is None:
            self._lines = re.split(r"\r\n|\r|\n", self.text)  # as Python counts lines (not form feeds)
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""


_NAMED = re.compile(r"(?:class|def)\s+(\w+)")


def _module_level(body: list[ast.stmt], typing_only: bool = False) -> Iterator[ast.stmt]:
    """The statements run at import time: the module's own, and those in its if / try / with
    / loop blocks. Under ``if TYPE_CHECKING:`` only the imports: they tell where a name comes
    from, but a class defined there never exists at runtime."""
    for s in body:
        if isinstance(s, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, *_TRY_STAR)):
            if isinstance(s, ast.If) and _dotted(s.test) in _TYPE_CHECKING:
                yield from _module_level(s.body, True)
                yield from _module_level(s.orelse, typing_only)
                continue
            for block in _blocks(s):
                yield from _module_level(block, typing_only)
        elif isinstance(s, ast.Match):
            for case in s.cases:
                yield from _module_level(case.body, typing_only)
        elif not typing_only or isinstance(s, (ast.Import, ast.ImportFrom)):
            yield s


_TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()
_TYPE_CHECKING = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING"})


def _blocks(s: ast.AST) -> Iterator[list[ast.stmt]]:
    body = getattr(s, "body", [])
    yield body if isinstance(body, list) else []  # a lambda's body is an expression
    yield from (h.body for h in getattr(s, "handlers", ()))
    yield from (c.body for c in getattr(s, "cases", ()))
    yield getattr(s, "orelse", [])
    yield getattr(s, "finalbody", [])


def _dotted(expr: ast.expr) -> str | None:
    """``a.b.c`` for a name or a chain of attributes on one; None for anything else."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return ".".join([expr.id, *reversed(parts)])


def _assigned(s: ast.stmt) -> list[str]:
    """The plain names a statement binds at its own level (``x = ...``, ``x: T = ...``, ``def x``)."""
    if isinstance(s, ast.Assign):
        return [t.id for t in s.targets if isinstance(t, ast.Name)]
    if isinstance(s, ast.AnnAssign):
        return [s.target.id] if isinstance(s.target, ast.Name) else []
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [s.name]
    return []


def _params(a: ast.arguments) -> Iterator[tuple[ParamKind, ast.arg, bool]]:
    """Each parameter with its kind and whether it has a default, in order."""
    positional = [(ParamKind.POSITIONAL_ONLY, p) for p in a.posonlyargs] + [(ParamKind.POSITIONAL, p) for p in a.args]
    first_default = len(positional) - len(a.defaults)
    yield from ((kind, p, i >= first_default) for i, (kind, p) in enumerate(positional))
    if a.vararg:
        yield ParamKind.VAR_POSITIONAL, a.vararg, False
    keyword = zip(a.kwonlyargs, a.kw_defaults, strict=True)
    yield from ((ParamKind.KEYWORD_ONLY, p, d is not None) for p, d in keyword)
    if a.kwarg:
        yield ParamKind.VAR_KEYWORD, a.kwarg, False


def _without_self(params: list[Param]) -> tuple[Param, ...]:
    if params and params[0].kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL):
        return tuple(params[1:])
    return tuple(params)
