"""Export specs: how a module gets its example inputs (no torch).

Resolved in order: a table in pyproject.toml's ``[tool.exportlens.modules]``,
then an ``example_inputs()``/``get_example_inputs()`` method on the class.
Every problem with a spec becomes a spec-error Finding on the spec's own line.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core import codes
from ..core.report import Finding
from ..core.settings import NAMES, Settings, setting_value
from ..core.sources import Sources, resolved
from ..core.targets import Location, Span, Target
from ..find.packages import package_base
from ..find.syntax import decode_finding
from ..find.walk import exclude_problem
from .pyproject import MODULES, PYPROJECT, SECTION, Pyproject, read
from .shapes import Shape
from .values import Call, Ref
from .variants import expand as expand_variants

ROOT_MARKERS = ("setup.py", "setup.cfg", ".git")  # a project without pyproject.toml
INSTALLS = frozenset({"site-packages", "dist-packages"})


class TensorFill(str, enum.Enum):
    """How a spec's tensor is filled (``fill = "ones"``): each is the torch function of that name."""

    RANDN = "randn"
    RAND = "rand"
    ONES = "ones"
    ZEROS = "zeros"
    ARANGE = "arange"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class TensorInput:
    shape: Shape
    fill: TensorFill = TensorFill.RANDN
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


class SpecSource(str, enum.Enum):
    """Where a spec's example inputs come from, set where the spec is read (spec/module_spec.py)."""

    PYPROJECT = "pyproject"  # a table in pyproject.toml
    CODE = "code"  # the class's example_inputs() method
    ANNOTATIONS = "annotations"  # jaxtyping on forward (a table may add init and dims)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ExportSpec:
    target: str  # "path.py:Class"
    source: SpecSource
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
        how = {
            SpecSource.CODE: f" ({self.example_method}())",
            SpecSource.ANNOTATIONS: " (forward's jaxtyping annotations)",
        }.get(self.source, "")
        return f"{loc.path}:{loc.line}{how}"


# what an ExportSpec's ``Any`` values (init, inputs) may hold beyond plain data: the codec
# carries these beside what the fields' types name (workers/protocol.py)
HELD = (TensorInput, ValueInput, IntInput, Call)


@dataclass
class ProjectSpecs:
    root: Path
    settings: Settings
    tables: dict[str, tuple[Any, Location]]  # target -> (raw table, location)
    findings: list[Finding]
    text: str = ""

    @property
    def tree(self) -> Pyproject:
        """Where each key of its pyproject.toml is written."""
        return read(self.text)


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
    text, tree, findings = _read_toml(sources)
    if tree is None or tree.doc is None:
        return ProjectSpecs(sources.root, Settings(), {}, findings, text)
    section = _section(tree, findings)
    settings = table_settings(section, Settings(), lambda key: tree.where((*SECTION, key)), findings)
    if "exclude" in section:
        _check_exclude(section["exclude"], tree, findings)
    tables = expand_variants(_module_tables(section, tree, findings), tree, findings)
    return ProjectSpecs(sources.root, settings, tables, findings, text)


def _read_toml(sources: Sources) -> tuple[str, Pyproject | None, list[Finding]]:
    """pyproject.toml's text and tree; None and the finding where it cannot be read or parsed."""
    try:
        text = sources.decode(PYPROJECT) if sources.exists(PYPROJECT) else ""
    except UnicodeDecodeError as e:  # TOML is UTF-8: a file that is not does not parse
        return "", None, [decode_finding(e, PYPROJECT, codes.SPEC_TOML)]
    except OSError as e:
        message = f"cannot read pyproject.toml: {e.strerror or e}"
        return "", None, [codes.finding(codes.SPEC_TOML, message, PYPROJECT, 1)]
    tree = read(text)
    if tree.doc is None and (error := tree.error) is not None:
        message = f"pyproject.toml does not parse: {error}"
        at = max(error.line, 1)
        return text, None, [codes.finding(codes.SPEC_TOML, message, PYPROJECT, at, column=max(error.col, 1))]
    return text, tree, []


def _check_exclude(value: Any, tree: Pyproject, findings: list[Finding]) -> None:
    """An ``exclude`` the walk (walk.py) cannot use: a finding on the pattern that is wrong, else on the key."""
    problem = exclude_problem(value)
    if problem is None:
        return
    path = (*SECTION, "exclude")
    where = tree.key(path) or Span(1)
    if isinstance(value, list):
        items = tree.items(path)
        bad = next((i for i, glob in enumerate(value) if exclude_problem([glob])), None)
        where = items[bad].span if bad is not None and bad < len(items) else where
    findings.append(codes.finding_at(codes.SPEC_INVALID, problem, PYPROJECT, where))


def _module_tables(
    section: dict[str, Any], tree: Pyproject, findings: list[Finding]
) -> dict[str, tuple[Any, Location]]:
    """``[tool.exportlens.modules]``: each well-named target's raw table and where it is written."""
    modules = section.get("modules", {})
    if not isinstance(modules, dict):
        message = "[tool.exportlens.modules] must be a table of 'path.py:Class' keys"
        findings.append(codes.finding_at(codes.SPEC_INVALID, message, PYPROJECT, tree.where(MODULES).span))
        return {}
    tables: dict[str, tuple[Any, Location]] = {}
    for target, table in modules.items():
        loc = Location(PYPROJECT, Span(tree.where((*MODULES, target)).line))
        if ":" not in target or not target.split(":", 1)[0].endswith(".py"):
            message = f"module key '{target}' must look like 'path/to/file.py:ClassName'"
            findings.append(codes.finding(codes.SPEC_INVALID, message, PYPROJECT, loc.line))
            continue
        tables[target] = (table, loc)
    return tables


def _section(tree: Pyproject, findings: list[Finding]) -> dict[str, Any]:
    """``[tool.exportlens]``; {} with a finding on its key where it (or ``tool``) is not a table."""
    doc = tree.doc or {}
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        message = f"`tool` must be a table, not {_kind(tool)}"
        findings.append(codes.finding_at(codes.SPEC_INVALID, message, PYPROJECT, tree.where(("tool",)).span))
        return {}
    section = tool.get("exportlens", {})
    if not isinstance(section, dict):
        message = f"[tool.exportlens] must be a table, not {_kind(section)}"
        findings.append(codes.finding_at(codes.SPEC_INVALID, message, PYPROJECT, tree.where(SECTION).span))
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
