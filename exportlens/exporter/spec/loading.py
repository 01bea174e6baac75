"""Export specs: how a module gets its example inputs (no torch).

Resolved in order: a table in pyproject.toml's ``[tool.exportlens.modules]``,
then an ``example_inputs()``/``get_example_inputs()`` method on the class.
Every problem with a spec becomes a spec-error Finding on the spec's own line.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit.exceptions

from ..core import codes
from ..core.report import Finding
from ..core.settings import NAMES, Settings, setting_value
from ..core.sources import Sources, resolved
from ..core.targets import Location, Span, Target
from ..find.packages import package_base
from ..find.syntax import decode_finding
from ..find.walk import exclude_problem
from . import toml_text
from .shapes import Shape
from .values import Ref
from .variants import expand as expand_variants

PYPROJECT = "pyproject.toml"
ROOT_MARKERS = ("setup.py", "setup.cfg", ".git")  # a project without pyproject.toml
INSTALLS = frozenset({"site-packages", "dist-packages"})
FILLS = ("randn", "rand", "ones", "zeros", "arange")


@dataclass(frozen=True)
class TensorInput:
    shape: Shape
    fill: str = "randn"
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ValueInput:
    """A tensor with exact values: ``{ value = [2, 3], dtype = "i64" }``."""

    value: Any
    dtype: str | None = None


@dataclass(frozen=True)
class IntInput:
    """A Python int that forward takes, kept a variable in the program: ``"int[pos]"``. Its
    values are the dim ``pos``'s (its min, max and example), not baked in as one number."""

    dim: str


@dataclass(frozen=True)
class DimSpec:
    name: str
    min: int | None = None
    max: int | None = None
    example: int | None = None


@dataclass(frozen=True)
class ExportSpec:
    target: str  # "path.py:Class"
    source: str  # "pyproject" | "code" | "annotations" (jaxtyping on forward, a table may add init and dims)
    location: Location  # the module's spec table, or the example_inputs method
    init: dict[str, Any] = field(default_factory=dict)  # plain values and values.Call objects
    inputs: dict[str, Any] = field(
        default_factory=dict
    )  # forward param -> TensorInput | ValueInput | IntInput | plain | nested
    dims: dict[str, DimSpec] = field(default_factory=dict)  # every root Dim used
    settings: Settings = Settings()
    example_method: str | None = None
    # where each input / dim is written, for findings and edits: "inputs.x" -> Location
    locations: dict[str, Location] = field(default_factory=dict)
    factory: Ref | None = None  # what builds the module instead of its class: factory(**init)

    @property
    def path(self) -> str:
        return Target.parse(self.target).path

    def where(self, key: str) -> Location:
        return self.locations.get(key, self.location)

    def describe(self) -> str:
        loc = self.location
        how = {"code": f" ({self.example_method}())", "annotations": " (forward's jaxtyping annotations)"}.get(
            self.source, ""
        )
        return f"{loc.path}:{loc.line}{how}"


@dataclass
class ProjectSpecs:
    root: Path
    settings: Settings
    tables: dict[str, tuple[Any, Location]]  # target -> (raw table, location)
    findings: list[Finding]
    text: str = ""


# -- project root and pyproject ------------------------------------------------


def find_root(start: Path, folders: Iterable[Path] = ()) -> Path:
    """The project root of a file or folder: where reports' paths start, pyproject.toml is read
    and the cache lives. The nearest folder at or above ``start`` holding pyproject.toml; else
    the innermost of ``folders`` (the workspace folders, the folder a scan was given; a folder
    ``start`` is one) holding it; else the nearest holding setup.py, setup.cfg or .git, below
    any site-packages; else the folder above ``start``'s package chain. Never a file's own
    folder inside a package: its relative imports would climb out of the project."""
    here = resolved(start if start.is_dir() else start.parent)  # a file may be a link to nowhere, or to itself
    above = (here, *here.parents)
    given = {resolved(Path(f)) for f in folders} | ({here} if start.is_dir() else set())
    # an installed package is no checkout: pyenv's own .git above site-packages is not its project
    checkout = itertools.takewhile(lambda f: f.name not in INSTALLS, above)
    return (
        next((f for f in above if (f / PYPROJECT).is_file()), None)
        or next((f for f in above if f in given), None)
        or next((f for f in checkout if any((f / m).exists() for m in ROOT_MARKERS)), None)
        or package_base(here)
    )


def load_project(sources: Sources) -> ProjectSpecs:
    """The project's pyproject.toml (as ``sources`` has it): settings and module tables."""
    text, doc, findings = _read_toml(sources)
    if doc is None:
        return ProjectSpecs(sources.root, Settings(), {}, findings, text)
    lines = TomlLines(text)
    section = _section(doc, lines, findings)
    settings = table_settings(section, Settings(), lambda key: lines.at("tool.exportlens", key), findings)
    problem = exclude_problem(section.get("exclude", []))  # the walk (walk.py) skips what it names
    if problem:
        findings.append(
            codes.finding_at(codes.SPEC_INVALID, problem, PYPROJECT, lines.at("tool.exportlens", "exclude").span)
        )
    tables = expand_variants(_module_tables(section, lines, findings), lines, findings)
    return ProjectSpecs(sources.root, settings, tables, findings, text)


def _read_toml(sources: Sources) -> tuple[str, dict[str, Any] | None, list[Finding]]:
    """pyproject.toml's text and document; None and the finding where it cannot be read or parsed."""
    text = ""
    try:
        text = sources.decode(PYPROJECT) if sources.exists(PYPROJECT) else ""
        return text, toml_text.parse(text).unwrap(), []
    except UnicodeDecodeError as e:
        return (
            "",
            None,
            [decode_finding(e, PYPROJECT, codes.SPEC_TOML)],
        )  # TOML is UTF-8: a file that is not does not parse
    except OSError as e:
        return (
            "",
            None,
            [codes.finding(codes.SPEC_TOML, f"cannot read pyproject.toml: {e.strerror or e}", PYPROJECT, 1)],
        )
    except tomlkit.exceptions.ParseError as e:
        message = f"pyproject.toml does not parse: {e}"
        return text, None, [codes.finding(codes.SPEC_TOML, message, PYPROJECT, max(e.line, 1), column=max(e.col, 1))]


def _module_tables(
    section: dict[str, Any], lines: TomlLines, findings: list[Finding]
) -> dict[str, tuple[Any, Location]]:
    """``[tool.exportlens.modules]``: each well-named target's raw table and where it is written."""
    modules = section.get("modules", {})
    if not isinstance(modules, dict):
        message = "[tool.exportlens.modules] must be a table of 'path.py:Class' keys"
        findings.append(
            codes.finding_at(codes.SPEC_INVALID, message, PYPROJECT, lines.at("tool.exportlens", "modules").span)
        )
        return {}
    tables: dict[str, tuple[Any, Location]] = {}
    for target, table in modules.items():
        loc = Location(PYPROJECT, Span(lines.target_line(target)))
        if ":" not in target or not target.split(":", 1)[0].endswith(".py"):
            message = f"module key '{target}' must look like 'path/to/file.py:ClassName'"
            findings.append(codes.finding(codes.SPEC_INVALID, message, PYPROJECT, loc.line))
            continue
        tables[target] = (table, loc)
    return tables


def _section(doc: dict[str, Any], lines: TomlLines, findings: list[Finding]) -> dict[str, Any]:
    """``[tool.exportlens]``; {} with a finding on its line where it (or ``tool``) is not a table."""
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        where = lines.at(None, "tool")
        findings.append(
            codes.finding_at(codes.SPEC_INVALID, f"`tool` must be a table, not {_kind(tool)}", PYPROJECT, where.span)
        )
        return {}
    section = tool.get("exportlens", {})
    if not isinstance(section, dict):
        where = lines.at("tool", "exportlens")
        message = f"[tool.exportlens] must be a table, not {_kind(section)}"
        findings.append(codes.finding_at(codes.SPEC_INVALID, message, PYPROJECT, where.span))
        return {}
    return section


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), "a value"
    )


def table_settings(
    table: dict[str, Any], base: Settings, where: Callable[[str], Location], findings: list[Finding]
) -> Settings:
    """``base`` with the table's own settings; each bad one is a finding on its key, and the base's value stays."""
    changes: dict[str, Any] = {}
    for name in NAMES:
        if name in table:
            try:
                changes[name] = setting_value(name, table[name])
            except ValueError as e:
                findings.append(
                    codes.finding_at(
                        codes.SPEC_INVALID, f"{name} {table[name]!r} is not {e}", PYPROJECT, where(name).span
                    )
                )
    return replace(base, **changes)


class TomlLines:
    """Find where a key is written in pyproject.toml; tomlkit keeps no positions."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def target_line(self, target: str) -> int:
        quoted = re.compile(r"""["']""" + re.escape(target) + r"""["']""")
        for i, line in enumerate(self.lines, 1):
            if quoted.search(line):
                return i
        return 1

    def key_line(self, table: str, key: str | None) -> int:
        header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, table.split("."))) + r"\s*\]")
        for i, line in enumerate(self.lines, 1):
            if header.match(line):
                if key is None:
                    return i
                return self.key_after(i, key) or i
        return 1

    def at(self, table: str | None, key: str) -> Location:
        """Where ``key`` of ``table`` (None: the top level) is written: its line and the key's columns."""
        line = self.key_line(table, key) if table else (self.key_after(1, key, inline=True) or 1)
        cols = self.column_of(line, key)
        return Location(PYPROJECT, Span(line, cols[0], line, cols[1]) if cols else Span(line))

    def key_after(self, start: int, key: str, *, inline: bool = False) -> int | None:
        """Line of ``key = `` from line ``start`` up to the next table header."""
        pattern = re.compile(r"(^|[{,\s])[\"']?" + re.escape(key) + r"[\"']?\s*=")
        for i in range(start, len(self.lines) + 1):
            line = self.lines[i - 1]
            if i > start and re.match(r"^\s*\[", line):
                return None
            if pattern.search(line if i > start or inline else line.split("]", 1)[-1]):
                return i
        return None

    def column_of(self, line: int, key: str) -> tuple[int, int] | None:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        m = re.search(r"(?<![\w-])[\"']?" + re.escape(key) + r"[\"']?\s*=", text)
        return (m.start() + 1, m.start() + 1 + len(key)) if m else None
