"""A first export spec for a module that has none (libcst, tomlkit; no torch).

The constructor's literal defaults become ``init``; each parameter of ``forward`` gets
the options guesses.py reads from the code. ``candidates`` lists whole specs to try,
the likeliest first: the owner exports each until one runs (workers/guessed.py), and
the table written says in a comment what was guessed and what the check gave.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import tomlkit

from ..core.report import Edit
from ..core.targets import ModuleClass
from ..spec.guesses import Option, dims_of, options
from ..spec.loading import PYPROJECT
from ..spec.reading import find_class, read_class
from .text_edits import edit_between

_BATCH_MAX = ("max_batch_size", "max_batch", "batch_size")
_SEQ_MAX = (
    "max_seq_len",
    "max_seq_length",
    "block_size",
    "max_position_embeddings",
    "context_length",
    "max_len",
    "seq_len",
)
CANDIDATES = 4  # whole specs tried at most, per module
# what a TOML comment may not hold (TOML 1.0: control characters but tab)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class Candidate:
    """One whole spec to try: ``init``, ``inputs`` and the ``dims`` they use."""

    init: dict[str, Any]
    missing: tuple[str, ...]  # constructor parameters the user must fill
    inputs: dict[str, Option]
    dims: dict[str, dict[str, int]] = field(default_factory=dict)

    def table(self, verdict: str | None = None) -> tomlkit.items.Table:
        """The ``[tool.exportlens.modules."path.py:Class"]`` table, its guesses in a comment."""
        table = tomlkit.table()
        said = f"; checked: {verdict}" if verdict else " (not checked yet: export it to see)"
        table.add(tomlkit.comment(_comment(f"Guessed by exportlens from the code{said}.")))
        for name, option in self.inputs.items():
            table.add(tomlkit.comment(_comment(f"  {name}: {option.why}")))
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


def candidates(module: ModuleClass, source: str) -> list[Candidate]:
    """Whole specs for ``module``, the likeliest first: every parameter's first option,
    then each other option of one parameter at a time."""
    params = [
        p
        for p in (module.forward.params if module.forward else ())
        if p.kind in ("positional", "positional_only", "keyword_only")
    ]
    cls = find_class(cst.parse_module(source), module.name)
    r = read_class(cls, [p.name for p in params])
    choices = {p.name: found for p in params if (found := options(p, r))}
    first = {name: opts[0] for name, opts in choices.items()}
    picks = [first] + [{**first, name: o} for name, opts in choices.items() for o in opts[1:]]
    out = []
    for pick in picks[:CANDIDATES]:
        used = sorted({d for o in pick.values() for d in dims_of(o.value)})
        ints = {o.value[4:-1] for o in pick.values() if isinstance(o.value, str) and o.value.startswith("int[")}
        out.append(Candidate(r.init, tuple(r.missing), pick, {d: _dim(d, r.sizes, d in ints) for d in used}))
    return out


def _dim(name: str, sizes: dict[str, Any], position: bool = False) -> dict[str, int]:
    """A dim's range: up to what the constructor allows (``max_seq_len``), where it says; a
    position (an int input) from 0 to the last place a sequence can start."""
    bound = _BATCH_MAX if name == "batch" else _SEQ_MAX if name == "seq" or position else ()
    most = next((sizes[n] for n in bound if isinstance(sizes.get(n), int) and sizes[n] >= 2), None)
    if position:
        return {"min": 0, "max": (most or 512) - 1}
    if name == "batch":
        return {"min": 1, "max": most or 64}
    return {"min": 2, "max": most or 512}


def scaffold_table(module: ModuleClass, source: str) -> tomlkit.items.Table:
    """The first candidate's table, not yet checked (the editor's quick fix, written at once)."""
    return candidates(module, source)[0].table()


def _inline(values: dict[str, Any]) -> tomlkit.items.InlineTable:
    t = tomlkit.inline_table()
    t.update(values)
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
