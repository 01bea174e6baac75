"""A first export spec for a module that has none (libcst, tomlkit; no torch).

The constructor's literal defaults become ``init``; each parameter of ``forward`` gets
the options guesses.py reads from the code. ``candidates`` lists whole specs to try,
the likeliest first: the owner exports each until one runs (workers/guess_trials.py), and
the table written says in a comment what was guessed and what the check gave.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, cast

import libcst as cst
import tomlkit

from ..core.report import Edit
from ..core.targets import ModuleClass
from ..spec.configs import Read, guess_required, scaled
from ..spec.guesses import Option, dims_of, options
from ..spec.loading import PYPROJECT
from ..spec.reading import Reading, evaluate, find_class, literal, method, read_class
from .text_edits import edit_between

_BATCH_MAX = ("max_batch_size", "max_batch", "batch_size")
_SEQ_MAX = (
    "max_seq_len",
    "max_seq_length",
    "max_seq",
    "block_size",
    "max_position_embeddings",
    "context_length",
    "max_len",
    "seq_len",
)
CANDIDATES = 4  # whole specs tried at most, per module
# functions that build a model: `get_model`, `build_gpt`, `create_model`, `make_net`
FACTORY = re.compile(r"^(get|build|create|make)_\w+$")
FACTORY_DEF = re.compile(r"^def (get|build|create|make)_\w+\(", re.MULTILINE)  # a file's cheap first test
# what a TOML comment may not hold (TOML 1.0: control characters but tab)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class Candidate:
    """One whole spec to try: ``init``, ``inputs`` and the ``dims`` they use."""

    init: dict[str, Any]
    missing: tuple[str, ...]  # constructor parameters the user must fill
    inputs: dict[str, Option]
    dims: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what was guessed or scaled for the constructor
    factory: str | None = None  # "path.py:build_model": a function of the project builds the module

    def table(self, verdict: str | None = None) -> tomlkit.items.Table:
        """The ``[tool.exportlens.modules."path.py:Class"]`` table, its guesses in a comment."""
        table = tomlkit.table()
        said = f"; checked: {verdict}" if verdict else " (not checked yet: export it to see)"
        table.add(tomlkit.comment(_comment(f"Guessed by exportlens from the code{said}.")))
        for name, option in self.inputs.items():
            table.add(tomlkit.comment(_comment(f"  {name}: {option.why}")))
        for note in self.notes:
            table.add(tomlkit.comment(_comment(f"  {note}")))
        if self.factory:
            table["factory"] = self.factory
        if self.init or self.missing:
            table["init"] = _inline(self.init)
            if self.missing:
                table["init"].comment(_comment(f"TODO: also pass {', '.join(self.missing)}"))
        table["inputs"] = _inline(
            {n: _inline(o.value) if isinstance(o.value, dict) else o.value for n, o in self.inputs.items()}
        )
        if self.dims:
            table["dims"] = _inline({n: _inline(d) for n, d in self.dims.items()})
        return table


def _comment(text: str) -> str:
    """``text`` as a TOML comment may hold it: a control character in a quoted line of code
    or a file name (an ESC) is written visibly (``\\x1b``), and the file still parses."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def candidates(
    module: ModuleClass, source: str, given: dict[str, Any] | None = None, read: Read | None = None
) -> list[Candidate]:
    """Whole specs for ``module``, the likeliest first: every parameter's first option,
    then each other option of one parameter at a time; ``given``: constructor arguments a
    factory passes (they size the inputs); ``read``: the project's other files' texts."""
    params = [p for p in (module.forward.params if module.forward else ()) if not p.kind.variadic]
    tree = cst.parse_module(source)
    r = read_class(find_class(tree, module.name), [p.name for p in params], tree, module.path, given, read)
    choices = {p.name: found for p in params if (found := options(p, r))}
    if params and not choices and (found := options(params[0], r, keep_default=False)):
        choices = {params[0].name: found}  # every argument has a default: the first still needs a value
    first = {name: opts[0] for name, opts in choices.items()}
    picks = [first] + [{**first, name: o} for name, opts in choices.items() for o in opts[1:]]
    out = []
    for pick in picks[:CANDIDATES]:
        used = sorted({d for o in pick.values() for d in dims_of(o.value)})
        ints = {o.value[4:-1] for o in pick.values() if isinstance(o.value, str) and o.value.startswith("int[")}
        dims = {d: dim(d, r.sizes, d in ints) for d in used}
        dims, fit = fitted(dims, ints, r)
        out.append(Candidate(r.init, tuple(r.missing), pick, dims, (*r.notes, *fit)))
    return out


def fitted(dims: dict[str, dict[str, int]], ints: set[str], r: Reading) -> tuple[dict[str, dict[str, int]], list[str]]:
    """``dims`` where new tokens (``seq``) are written at a position (an int input) into a
    cache the code allocates: ranges whose sum fits the cache's length (`start_pos + seq <=
    max_seq_len`, the prompt a quarter of it), as eager needs, with a note saying so."""
    positions = sorted(ints & dims.keys())
    found = cache_length(r)
    if found is None or "seq" not in dims or not positions:
        return dims, []
    length, written = found
    seq = max(dims["seq"]["min"], min(dims["seq"]["max"], length // 4))
    out = {**dims, "seq": {**dims["seq"], "max": seq}}
    out.update({p: {**dims[p], "max": length - seq} for p in positions})
    said = " and ".join(f"`{p}` up to {length - seq}" for p in positions)
    return out, [f"`seq` up to {seq} and {said}: together they fit the cache of {length} positions (`{written}`)"]


def cache_length(r: Reading) -> tuple[int, str] | None:
    """The length of the caches the file allocates (``torch.zeros(max_batch_size, max_seq_len,
    ...)``: the axis of the context's size, else the second), with one allocation as written;
    None where there is none, or they differ."""
    context = next((r.sizes[n] for n in _SEQ_MAX if isinstance(r.sizes.get(n), int)), None)
    lengths = {context if context in shape else shape[1] for shape, _ in r.allocated.values()}
    if len(lengths) != 1 or None in lengths:
        return None
    return cast(int, lengths.pop()), next(iter(r.allocated.values()))[1]


def dim(name: str, sizes: dict[str, Any], position: bool = False) -> dict[str, int]:
    """A dim's range: up to what the constructor allows (``max_seq_len``), where it says; a
    position (an int input) from 0 to the last place a sequence can start."""
    bound = _BATCH_MAX if name == "batch" else _SEQ_MAX if name == "seq" or position else ()
    most = next((sizes[n] for n in bound if isinstance(sizes.get(n), int) and sizes[n] >= 2), None)
    if position:
        return {"min": 0, "max": (most or 512) - 1}
    if name == "batch":
        return {"min": 1, "max": most or 64}
    return {"min": 2, "max": most or 512}


def factory_candidates(path: str, source: str, classes: dict[str, ModuleClass]) -> dict[str, list[Candidate]]:
    """For each ``get_model``/``build_*`` function of the file that returns one of its module
    ``classes``, keyed ``path.py:build_x``: its guesses, ``factory`` naming it, its own
    arguments in ``init`` (literal defaults, large sizes scaled down) and the inputs of the
    class it returns."""
    tree = cst.parse_module(source)
    out = {}
    for fn in tree.body:
        if not isinstance(fn, cst.FunctionDef) or not FACTORY.match(fn.name.value):
            continue
        call = returned_call(fn)
        returned = classes.get(call.func.value) if call is not None and isinstance(call.func, cst.Name) else None
        if call is None or returned is None or returned.forward is None:
            continue
        target = f"{path}:{fn.name.value}"
        init, missing, notes = factory_arguments(fn, tree, path)
        said = (f"factory: {fn.name.value}() builds {returned.name}", *notes)
        given = passed(call, find_class(tree, returned.name), init)
        out[target] = [
            replace(c, init=init, missing=missing, notes=said, factory=target)
            for c in candidates(returned, source, given)
        ]
    return out


def returned_call(fn: cst.FunctionDef) -> cst.Call | None:
    """``Net(...)`` for ``return Net(...)``, or for ``model = Net(...)`` ... ``return model``."""
    made: dict[str, cst.Call] = {}
    for node in _statements(fn):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                made[target.value] = node.value
        if isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            if isinstance(value, cst.Call):
                return value
            return made.get(value.value) if isinstance(value, cst.Name) else None
    return None


def passed(call: cst.Call, cls: cst.ClassDef | None, sizes: dict[str, Any]) -> dict[str, Any]:
    """What the factory passes the class's ``__init__``, by parameter name, where it can be
    read from its own arguments (``Net(hidden_size, classes=10)``)."""
    init = method(cls, "__init__") if cls is not None else None
    names = [p.name.value for p in init.params.params[1:]] if init is not None else []
    out = {}
    for i, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword else names[i] if i < len(names) and not arg.star else None
        value = evaluate(arg.value, sizes)
        if name is not None and value is not None:
            out[name] = value
    return out


def _statements(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    """The small statements of ``fn``'s own body, in order (not of nested blocks)."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    return [small for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body]


def factory_arguments(
    fn: cst.FunctionDef, tree: cst.Module, path: str, read: Read | None = None
) -> tuple[dict, tuple[str, ...], list[str]]:
    """The factory's keyword arguments: its literal defaults, a large size scaled down; the
    required ones guessed as a constructor's are (configs.py)."""
    signature = [*fn.params.params, *fn.params.kwonly_params]
    guessed, missing = guess_required([p for p in signature if p.default is None], tree, path, literal, read)
    init, notes = {}, list(guessed.notes)
    for p in signature:
        name = p.name.value
        value = literal(p.default) if p.default is not None else guessed.init.get(name)
        small = scaled(name, value) if p.default is not None else value
        if small != value:
            notes.append(f"init {name} {value} -> {small} (scaled down)")
        if small is not None:
            init[name] = small
    return init, tuple(missing), notes


def scaffold_table(module: ModuleClass, source: str) -> tomlkit.items.Table:
    """The first candidate's table, not yet checked (the editor's quick fix, written at once)."""
    return candidates(module, source)[0].table()


def _inline(values: dict[str, Any]) -> tomlkit.items.InlineTable:
    """``values`` as one inline table, a nested table (a config's ``kwargs``) inline too."""
    t = tomlkit.inline_table()
    t.update({k: _inline(v) if isinstance(v, dict) else v for k, v in values.items()})
    return t


def with_tables(pyproject: str | None, tables: dict[str, tomlkit.items.Table]) -> str:
    """``pyproject`` (None: a new file) with these module tables added; every other byte kept."""
    doc = tomlkit.parse(pyproject or "")
    tool = doc.setdefault("tool", tomlkit.table(is_super_table=True))
    section = tool.setdefault("exportlens", tomlkit.table(is_super_table=True))
    modules = section.setdefault("modules", tomlkit.table(is_super_table=True))
    for target, table in tables.items():
        modules[target] = table
    return tomlkit.dumps(doc)


def spec_edit(
    module: ModuleClass, source: str, pyproject: str | None, table: tomlkit.items.Table | None = None
) -> Edit:
    """The edit that adds ``module``'s spec (``table``, else the first guess) to pyproject.toml."""
    new = with_tables(pyproject, {module.target: table if table is not None else scaffold_table(module, source)})
    edit = edit_between(PYPROJECT, pyproject or "", new)
    assert edit is not None
    return edit
