"""Completion in pyproject.toml's module tables: the project's module targets in a
``[tool.exportlens.modules."`` header, a table's keys, forward's parameters in ``inputs``,
dtypes and dim names in shape strings, dim names in ``dims``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from ...exporter.core.targets import Target
from ...exporter.spec.loading import TensorFill
from ...exporter.spec.module_spec import _TABLE_KEYS
from ...exporter.spec.shapes import DTYPES
from ...exporter.spec.spec_text import MODULES, VARIANTS, Context, context_at, family, module_of, uses
from ..session import Session
from ..snapshots import DocumentSnapshot
from .spec_where import SpecDoc, signature, where_used

TRIGGERS = ['"', "[", ",", " ", "."]
_KEY_DOCS = {
    "init": "constructor keyword arguments: `init = { hidden = 32 }`",
    "factory": "a function that builds the module, instead of calling the class",
    "inputs": 'forward\'s arguments by name: `inputs = { x = "f32[batch, 16]" }`',
    "dims": "each dim's range: `dims = { batch = { min = 1, max = 64 } }`",
    "device": "`cpu`, `cuda`, `cuda:N`, `mps` or `meta`",
    "strict": "torch.export's strict (TorchDynamo) mode",
    "ir": "`training` or `core-aten`",
    "timeout": "seconds this module's export may take",
    "memory_limit": 'memory its export may add: `"8GiB"`',
    "sandbox": "confine the export's file access",
    "name": 'this variant\'s name: `name = "small"`',
}
_DIM_KEYS = {"min": "the smallest size", "max": "the largest size", "example": "the size traced with"}


def completions(session: Session, doc: DocumentSnapshot, position: types.Position) -> list[types.CompletionItem]:
    spec = SpecDoc.of(doc)
    if spec is None:
        return []
    offset = spec.offset(position)
    ctx = context_at(doc.text, offset)
    root = session.root_of(doc.path)
    if ctx.kind == "header":
        return _targets(session, root, spec, ctx, offset)
    target = module_of(ctx.path)
    if target is None:
        return []
    rel = ctx.path[len(MODULES) + 1 :]
    variant = rel[:1] == (VARIANTS,)
    rel = rel[1:] if variant else rel
    edit = spec.range(ctx.start, offset)
    if ctx.kind == "key":
        return _keys(session, root, spec, target, rel, variant, ctx, edit)
    if ctx.kind == "string" and rel[:1] == ("inputs",):
        return _in_string(spec, target, rel, ctx, offset)
    return []


def _keys(
    session: Session, root: Path, spec: SpecDoc, target: str, rel, variant: bool, ctx: Context, edit
) -> list[types.CompletionItem]:
    typed = (ctx.start, ctx.start + len(ctx.text))  # the key being typed is not yet present
    present = {
        t.value
        for s in family(spec.scopes, target)
        for t in s.tokens
        if t.is_key and t.value is not None and (t.start, t.end) != typed
    }
    if rel == ():
        keys = [*_TABLE_KEYS, *(["name"] if variant else [])]
        kind = types.CompletionItemKind.Property
        return [_item(k, _KEY_DOCS.get(k, ""), f"{k} = ", edit, kind) for k in keys if k not in present]
    if rel == ("inputs",):
        return _input_keys(session.index.by_target(root, Target.parse(target)), present, edit)  # the table's key
    if rel == ("dims",):
        return _dim_names([u for u in uses(family(spec.scopes, target)) if (u.start, u.end) != typed], edit)
    if len(rel) == 2 and rel[0] == "dims":
        return [_item(k, doc, f"{k} = ", edit, types.CompletionItemKind.Property) for k, doc in _DIM_KEYS.items()]
    return []


def _input_keys(module, present: set[str], edit) -> list[types.CompletionItem]:
    """forward's parameters not yet given, each with its annotation or whether it is required."""
    params = module.forward.params if module and module.forward else ()
    return [
        _item(
            p.name,
            p.annotation or ("optional" if p.has_default else "required"),
            f"{p.name} = ",
            edit,
            types.CompletionItemKind.Field,
        )
        for p in params
        if not p.kind.variadic and p.name not in present
    ]


def _dim_names(all_uses, edit) -> list[types.CompletionItem]:
    """Dim names the shapes use that ``dims`` does not declare yet."""
    declared = {u.name for u in all_uses if u.input is None}
    names = dict.fromkeys(u.name for u in all_uses if u.input is not None and u.name not in declared)
    kind = types.CompletionItemKind.Variable
    return [
        _item(n, "used by " + where_used([u for u in all_uses if u.name == n]), f"{n} = {{ ", edit, kind) for n in names
    ]


def typed_dim(text: str) -> str | None:
    """The dim name being typed at the end of a shape string's ``text`` ("" right after ``[``
    or a separator), None where the cursor is not inside its brackets. One pass from the end
    (the regular expression it replaced, ``\\[[^\\]]*[\\[,*+\\-]\\s*([A-Za-z_]\\w*)?$``, tried
    each ``[`` to the end: seconds for a line of 10,000)."""
    word = len(text)
    while word and (text[word - 1].isalnum() or text[word - 1] == "_"):
        word -= 1
    if word < len(text) and not (text[word].isascii() and (text[word].isalpha() or text[word] == "_")):
        return None  # a name starts with a letter
    sep = word
    while sep and text[sep - 1].isspace():
        sep -= 1
    if not sep or text[sep - 1] not in "[,*+-":
        return None
    if text[sep - 1] != "[" and text.rfind("[", 0, sep - 1) <= text.rfind("]", 0, sep - 1):
        return None  # no bracket open before the separator
    return text[word:]


def _in_string(spec: SpecDoc, target: str, rel, ctx: Context, offset: int) -> list[types.CompletionItem]:
    if rel[-1] == "dtype":
        return _dtypes(spec, ctx.start, offset)
    if rel[-1] == "fill":
        at = spec.range(ctx.start, offset)
        return [_item(f.value, "fill", f.value, at, types.CompletionItemKind.EnumMember) for f in TensorFill]
    head = re.fullmatch(r"(\s*)[A-Za-z0-9_]*", ctx.text)
    if head is not None:
        return _dtypes(spec, ctx.start + len(head.group(1)), offset)
    word = typed_dim(ctx.text)
    if word is None:
        return []
    start = offset - len(word)
    all_uses = [u for u in uses(family(spec.scopes, target)) if (u.start, u.end) != (start, offset) or start == offset]
    names = dict.fromkeys(u.name for u in all_uses)
    edit = spec.range(start, offset)
    return [
        _item(
            n, "used by " + where_used([u for u in all_uses if u.name == n]), n, edit, types.CompletionItemKind.Variable
        )
        for n in names
    ]


def _dtypes(spec: SpecDoc, start: int, offset: int) -> list[types.CompletionItem]:
    edit = spec.range(start, offset)
    return [
        _item(short, f"torch.{full}", short, edit, types.CompletionItemKind.EnumMember)
        for short, full in DTYPES.items()
    ]


def _targets(session: Session, root: Path, spec: SpecDoc, ctx: Context, offset: int) -> list[types.CompletionItem]:
    """``[tool.exportlens.modules."`` -> each module of this project, those without a table first."""
    if ctx.path != MODULES:
        return []
    edit, close = _target_edit(spec, ctx, offset)
    written = {s.key[0] for s in spec.scopes}
    items = []
    for _, m in sorted(session.index.under(root), key=lambda pm: pm[1].target):
        has = m.target in written
        doc = f"```python\nclass {m.name}\n    def {signature(m)}\n```\n\n" + (
            "has a table here" if has else "no table yet"
        )
        item = _item(
            m.target,
            f"class {m.name}" + (" (has a table)" if has else ""),
            close(m.target),
            edit,
            types.CompletionItemKind.Class,
            doc,
        )
        item.sort_text = ("1" if has else "0") + m.target
        items.append(item)
    return items


# after the cursor in a header: the rest of the key, its closing quote, the closing bracket
_HEADER_REST = re.compile(r"""[^"'\]\s]*["']?([ \t]*\])?""")


def _target_edit(spec: SpecDoc, ctx: Context, offset: int) -> tuple[types.Range, Callable[[str], str]]:
    """The range a target replaces and the text that writes it: whatever of the key, its
    quotes and the header's bracket the editor already has (one it closed as the user typed
    ``[`` or ``"``) is replaced, not written twice."""
    quote = ctx.text[:1] if ctx.text[:1] in ('"', "'") else ""
    line_start = spec.doc.text.rfind("\n", 0, ctx.start) + 1
    single = (
        not spec.doc.text[line_start : ctx.start].lstrip().startswith("[[")
    )  # an array of tables: `.variants]]` follows
    rest = _HEADER_REST.match(spec.doc.text, offset)
    assert rest is not None  # every part of the pattern is optional: it matches anywhere
    end = rest.end() if single or rest.group(1) is None else rest.start(1)
    bracket = "]" if single else ""
    edit = spec.range(ctx.start + len(quote), end)
    return edit, (lambda t: f"{t}{quote}{bracket}") if quote else (lambda t: f'"{t}"{bracket}')


def _item(
    label: str, detail: str, new_text: str, edit: types.Range, kind, doc: str | None = None
) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=kind,
        detail=detail,
        documentation=types.MarkupContent(types.MarkupKind.Markdown, doc) if doc else None,
        filter_text=label,
        text_edit=types.TextEdit(edit, new_text),
    )
