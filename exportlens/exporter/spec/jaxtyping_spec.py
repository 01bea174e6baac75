"""Example inputs from jaxtyping annotations on ``forward`` (libcst; no torch, no jaxtyping).

``x: Float[Tensor, "batch seq 16"]`` reads as the input ``f32[batch, seq, 16]``: the
dtype class gives a concrete example dtype, each axis of the string a size. Read from
the source text: jaxtyping need not be installed for the spec, only where the module
imports it. The annotation's own name is resolved through the file's imports
(``from jaxtyping import Float as F``, ``import jaxtyping as jt``), so only jaxtyping's
classes count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core import codes
from ..core.report import Finding
from ..core.targets import Location, ModuleClass, Param, Span
from ..find.outline import JAXTYPING
from .loading import TensorInput
from .shapes import AUTO, Derived, Shape, ShapeError, Size, SizeRefused, parse_size, shown

# jaxtyping's dtype classes -> the dtype the example tensor is built in (docs/spec.md)
DTYPES: dict[str, str] = {
    **dict.fromkeys(("Float", "Float32", "Inexact", "Real", "Num", "Shaped"), "f32"),
    "Float16": "f16",
    "BFloat16": "bf16",
    "Float64": "f64",
    **dict.fromkeys(("Int", "Integer", "Int64"), "i64"),
    "Int32": "i32",
    "Int16": "i16",
    "Int8": "i8",
    **dict.fromkeys(("UInt", "UInt8"), "u8"),
    "Bool": "bool",
    **dict.fromkeys(("Complex", "Complex64"), "c64"),
    "Complex128": "c128",
}
# jaxtyping's dtype classes with no example dtype here: a finding, not a guess
UNBUILT = frozenset(
    {"Key", "Int2", "Int4", "UInt2", "UInt4", "UInt16", "UInt32", "UInt64", "Float4e2m1fn"}
    | {"Float8e4m3b11fnuz", "Float8e4m3fn", "Float8e4m3fnuz", "Float8e5m2", "Float8e5m2fnuz"}
)
_PREFIXES = "#*_?"  # broadcastable, variadic, anonymous, tree-path: jaxtyping's axis prefixes


@dataclass
class Annotated:
    """What forward's annotations give: inputs, where each input and dim is written, problems."""

    location: Location  # the first annotation: the spec's own place
    inputs: dict[str, TensorInput] = field(default_factory=dict)
    locations: dict[str, Location] = field(default_factory=dict)  # "inputs.x", "dims.batch"
    findings: list[Finding] = field(default_factory=list)


def read_annotations(module: ModuleClass) -> Annotated | None:
    """The inputs forward's jaxtyping annotations declare; None when it has none. Only a
    forward written in the class itself: an inherited one's positions are in another file."""
    if not module.jaxtyped:
        return None  # (forward is not read: most modules' is decoded only where it is)
    forward = module.forward
    if forward is None or not module.span.line <= forward.span.line <= (module.span.end_line or forward.span.line):
        return None
    annotated = [(p, cls) for p in forward.params if (cls := jaxtyping_class(p)) is not None and p.annotation_span]
    if not annotated:
        return None
    out = Annotated(Location(module.path, annotated[0][0].annotation_span or module.span))  # (each has one)
    for param, cls in annotated:
        _read_param(param, cls, module, out)
    missing = [p.name for p in forward.params if not p.kind.variadic and not p.has_default]
    missing = [name for name in missing if name not in {p.name for p, _ in annotated}]
    if missing:
        names = ", ".join(f"`{m}`" for m in missing)
        message = (
            f"forward's {names} {'has' if len(missing) == 1 else 'have'} no jaxtyping shape annotation and no default: "
            f"annotate {'it' if len(missing) == 1 else 'them'},"
            f' or give every input in [tool.exportlens.modules."{module.target}"]'
        )
        out.findings.append(codes.finding_at(codes.SPEC_SIGNATURE, message, module.path, forward.name_span))
    return out


def jaxtyping_class(param: Param) -> str | None:
    """``Float`` for a parameter annotated ``Float[...]`` (any alias of jaxtyping's ``Float``)."""
    head = param.annotation_head or ""
    module, _, name = head.rpartition(".")
    return name if module == JAXTYPING and (name in DTYPES or name in UNBUILT) else None


def _read_param(param: Param, cls: str, module: ModuleClass, out: Annotated) -> None:
    assert param.annotation is not None and param.annotation_span is not None
    path = module.path
    where = Location(path, param.annotation_span)
    out.locations[f"inputs.{param.name}"] = where
    if cls in UNBUILT:
        message = (
            f"`{param.name}`: jaxtyping's `{cls}` has no dtype exportlens builds example tensors in"
            f" (it reads {', '.join(DTYPES)})"
        )
        out.findings.append(codes.finding_at(codes.SPEC_DTYPE, message, path, where.span))
        return
    literal = shape_literal(param.annotation)
    if literal is None:
        message = (
            f"`{param.name}`: the shape in `{param.annotation}` is not a string literal,"
            " and exportlens reads annotations without running them"
        )
        out.findings.append(codes.finding_at(codes.SPEC_SHAPE, message, path, where.span))
        return
    text, offset = literal
    sizes: list[Size] = []
    for m in re.finditer(r"\S+", text):
        span = _token_span(param.annotation_span, offset, m.start(), m.end())
        size = _axis(m.group(), param.name, module.target)
        if isinstance(size, (ShapeError, SizeRefused)):
            code = codes.SPEC_INVALID if isinstance(size, SizeRefused) else codes.SPEC_SHAPE
            out.findings.append(codes.finding_at(code, str(size), path, span))
            continue
        sizes.append(size)
        root = size.root if isinstance(size, Derived) else size if isinstance(size, str) and size != AUTO else None
        if root is not None:
            out.locations.setdefault(f"dims.{root}", Location(path, span))
    out.inputs[param.name] = TensorInput(Shape(DTYPES[cls], tuple(sizes)))


def shape_literal(annotation: str) -> tuple[str, int | None] | None:
    """The shape string of ``Float[Tensor, "b 3"]`` and, where the literal is written on the
    annotation's first line without escapes, the offset of its text in the annotation
    (None: no columns per axis)."""
    import libcst as cst  # here: a check of a tree without jaxtyping annotations never pays its import

    try:
        node = cst.parse_expression(annotation)
    except cst.ParserSyntaxError:
        return None
    items = node.slice if isinstance(node, cst.Subscript) else ()
    if (
        len(items) != 2
        or not isinstance(items[1].slice, cst.Index)
        or not isinstance(items[1].slice.value, cst.SimpleString)
    ):
        return None
    string = items[1].slice.value
    value = string.evaluated_value
    if not isinstance(value, str):
        return None  # bytes
    raw = cst.Module([]).code_for_node(string)
    start = annotation.find(raw)
    body = raw[len(string.prefix) + len(string.quote) : len(raw) - len(string.quote)]
    plain = start >= 0 and body == value and "\n" not in annotation[: start + len(raw)]
    return value, (start + len(string.prefix) + len(string.quote)) if plain else None


def _token_span(annotation: Span, offset: int | None, start: int, end: int) -> Span:
    """Where one axis is written; the whole annotation where that cannot be told."""
    if offset is None:
        return annotation
    first = annotation.column + offset
    return Span(annotation.line, first + start, annotation.line, first + end)


def _axis(token: str, param: str, target: str) -> Size | ShapeError | SizeRefused:
    """One axis of a jaxtyping shape as a size of the spec grammar (``docs/spec.md``)."""
    rest, flags = token, ""
    while rest and rest[0] in _PREFIXES and rest[0] not in flags:
        flags, rest = flags + rest[0], rest[1:]
    if rest.count("=") == 1:  # ``rows=3``: jaxtyping's other way to write ``3``
        rest = rest.split("=")[1]
    if "*" in flags or "..." in token:
        return ShapeError(
            f"`{param}`: `{token}` stands for any number of axes, but an example tensor has one rank: write "
            f'the axes out (`batch seq`), or give forward\'s inputs in [tool.exportlens.modules."{target}"]'
        )
    if "_" in flags:
        return AUTO  # jaxtyping checks no size there: torch decides (Dim.AUTO)
    try:
        return parse_size(rest)  # ``#name`` (size 1 or name) is traced as ``name``; ``?name`` as ``name``
    except SizeRefused:
        return SizeRefused(
            f"`{param}`: axis `{shown(token)}` is a derived size exportlens does not compute: {SizeRefused.LIMITS}"
        )
    except ShapeError:
        return ShapeError(
            f"`{param}`: axis `{token}` is not a size exportlens reads: a number, a name, `_`, "
            "or one name's `a*name+b` (torch's derived dims)"
        )
