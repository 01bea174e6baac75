"""What a module is, statically: its class, where it is written, its forward's
parameters. Plain frozen values every layer passes around (standard library only)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

# "path:Class", "path:Outer.Inner[variant]": the path is all before the last such colon
_NAME = re.compile(r"[^\W\d][\w.]*")  # a class name, dotted for a nested class
_DRIVE = re.compile(r"[A-Za-z]:?")  # a Windows drive letter, never a file's whole name


@dataclass(frozen=True)
class Span:
    """A range in a text file: 1-based lines and columns, end_column exclusive; no end:
    to the end of the line. The one position type inside exportlens (reports stay flat)."""

    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class Location:
    """A span in one file, the path relative to the project root (POSIX)."""

    path: str
    span: Span

    @property
    def line(self) -> int:
        return self.span.line


class ParamKind(str, enum.Enum):
    """How forward takes a parameter, as Python's own kinds (``inspect.Parameter``), set where the outline reads it."""

    POSITIONAL_ONLY = "positional_only"
    POSITIONAL = "positional"  # by position or by name
    VAR_POSITIONAL = "var_positional"  # *args
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"  # **kwargs

    @property
    def variadic(self) -> bool:
        """``*args`` or ``**kwargs``: it takes what the others leave, never one value of its own."""
        return self in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Param:
    name: str
    kind: ParamKind
    has_default: bool = False
    annotation: str | None = None  # source text of the annotation
    # what a subscripted annotation's head resolves to through the file's imports
    # (``F[Tensor, "b"]`` after ``from jaxtyping import Float as F``: "jaxtyping.Float"), and where
    # the annotation is written; not part of equality, like a position
    annotation_head: str | None = field(default=None, compare=False)
    annotation_span: Span | None = field(default=None, compare=False)


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
    jaxtyped: bool = False  # a parameter of forward is annotated with a jaxtyping type (spec/jaxtyping_spec.py)

    @property
    def target(self) -> str:
        return f"{self.path}:{self.name}" if self.name else self.path  # Target(path, name)'s, made often


@dataclass(frozen=True)
class Target:
    """``"models/net.py:Net"``: a module's file (relative to the project root, POSIX) and
    class. Reports and specs carry the string; this is the one place it is taken apart."""

    path: str
    name: str
    variant: str | None = None  # one of the class's [[...variants]]: "path.py:Class[small]"

    @classmethod
    def parse(cls, text: str) -> Target:
        """The class is after the last colon that a class name follows, so a Windows path
        keeps its drive: ``C:\\proj\\net.py:Net``, and ``C:\\proj\\net.py`` is a file alone."""
        named = _named(text)
        if named and not _DRIVE.fullmatch(named.path):
            return named
        if _DRIVE.fullmatch(text[:2]):
            return cls(text, "")  # "C:\\proj\\net.py": a file, no class named
        path, _, name = text.rpartition(":")
        if not path:
            return cls(name, "")  # "net.py" alone: a file, no class named
        name, bracket, variant = name.partition("[")
        return cls(path, name, variant[:-1] if bracket and variant.endswith("]") else None)

    @classmethod
    def of(cls, module: ModuleClass, variant: str | None = None) -> Target:
        """``module``'s target (``variant``'s, where given), made from its parts, never parsed."""
        return cls(module.path, module.name, variant)

    @property
    def module(self) -> str:
        """The class's own target, without the variant."""
        return f"{self.path}:{self.name}" if self.name else self.path

    def of_variant(self, variant: str | None) -> Target:
        """The same class's target for ``variant`` (None: the class's own)."""
        return Target(self.path, self.name, variant)

    def __str__(self) -> str:
        return self.module + (f"[{self.variant}]" if self.variant is not None else "")

    def __lt__(self, other: Target) -> bool:
        """In the order of the string form, the order reports list modules in (merge.py)."""
        return str(self) < str(other)


def _named(text: str) -> Target | None:
    """``path:Class`` or ``path:Class[variant]`` split at the last colon a class name follows,
    in one pass from the right: a target is the user's text (a pyproject key), and a pattern
    that backtracked over each colon took seconds on a long one."""
    at = len(text)
    while (at := text.rfind(":", 0, at)) > 0:
        name = _NAME.match(text, at + 1)
        if name is None:
            continue
        end = name.end()
        if end == len(text):
            return Target(text[:at], name.group())
        if text[end] == "[" and text.endswith("]") and len(text) - end >= 2:
            return Target(text[:at], name.group(), text[end + 1 : -1])
    return None
