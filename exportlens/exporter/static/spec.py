"""Export specs: how a module gets its example inputs (no torch).

Resolved in order: a table in pyproject.toml's ``[tool.exportlens.modules]``,
then an ``example_inputs()``/``get_example_inputs()`` method on the class.
Every problem with a spec becomes a spec-error Finding on the spec's own line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from ..core import codes
from ..core.report import Finding
from ..core.settings import NAMES, Settings, check
from ..core.targets import Target
from .shapes import Shape

PYPROJECT = "pyproject.toml"
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
class DimSpec:
    name: str
    min: int | None = None
    max: int | None = None
    example: int | None = None


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class ExportSpec:
    target: str  # "path.py:Class"
    source: str  # "pyproject" | "code"
    location: Location  # the module's spec table, or the example_inputs method
    init: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)  # forward param -> TensorInput | ValueInput | plain | nested
    dims: dict[str, DimSpec] = field(default_factory=dict)  # every root Dim used
    settings: Settings = Settings()
    example_method: str | None = None
    # where each input / dim is written, for findings and edits: "inputs.x" -> Location
    locations: dict[str, Location] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return Target.parse(self.target).path

    def where(self, key: str) -> Location:
        return self.locations.get(key, self.location)

    def describe(self) -> str:
        loc = self.location
        return f"{loc.path}:{loc.line}" + (f" ({self.example_method}())" if self.source == "code" else "")


@dataclass
class ProjectSpecs:
    root: Path
    settings: Settings
    tables: dict[str, tuple[Any, Location]]  # target -> (raw table, location)
    findings: list[Finding]
    text: str = ""


# -- project root and pyproject ------------------------------------------------


def find_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding pyproject.toml, else ``start``'s folder."""
    start = start.resolve()
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        if (folder / PYPROJECT).is_file():
            return folder
    return here


def load_project(root: Path, text: str | None = None) -> ProjectSpecs:
    path = root / PYPROJECT
    if text is None:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
    findings: list[Finding] = []
    try:
        doc = tomlkit.parse(text).unwrap()
    except tomlkit.exceptions.ParseError as e:
        findings.append(
            codes.finding(codes.SPEC_TOML, f"pyproject.toml does not parse: {e}", PYPROJECT, max(e.line, 1), column=max(e.col, 1))
        )
        return ProjectSpecs(root, Settings(), {}, findings, text)
    section = doc.get("tool", {}).get("exportlens", {})
    lines = TomlLines(text)
    settings = table_settings(section, Settings(), lines.key_line("tool.exportlens", None), findings)
    tables: dict[str, tuple[Any, Location]] = {}
    modules = section.get("modules", {})
    if not isinstance(modules, dict):
        findings.append(
            codes.finding(
                codes.SPEC_INVALID,
                "[tool.exportlens.modules] must be a table of 'path.py:Class' keys",
                PYPROJECT,
                lines.key_line("tool.exportlens", "modules"),
            )
        )
        modules = {}
    for target, table in modules.items():
        loc = Location(PYPROJECT, lines.target_line(target))
        if ":" not in target or not target.split(":", 1)[0].endswith(".py"):
            findings.append(
                codes.finding(codes.SPEC_INVALID, f"module key '{target}' must look like 'path/to/file.py:ClassName'", PYPROJECT, loc.line)
            )
            continue
        tables[target] = (table, loc)
    return ProjectSpecs(root, settings, tables, findings, text)


def table_settings(table: dict[str, Any], base: Settings, line: int, findings: list[Finding]) -> Settings:
    """``base`` with the table's own settings; each bad one is a finding, and the base's value stays."""
    changes: dict[str, Any] = {}
    for name in NAMES:
        if name in table:
            try:
                changes[name] = check(name, table[name])
            except ValueError as e:
                findings.append(codes.finding(codes.SPEC_INVALID, f"{name} {table[name]!r} is not {e}", PYPROJECT, line))
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
