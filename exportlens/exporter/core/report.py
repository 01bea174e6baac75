"""The report: plain data that crosses every boundary (worker -> CLI / server).

Lines and columns are 1-based; ``end_column`` is exclusive. Paths are
relative to the project root, in POSIX form. Nothing here imports torch.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import types
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin, get_type_hints

from .causes import Cause
from .equality import Equality
from .fixes import DimSize as DimSize
from .fixes import Edit as Edit
from .fixes import Fix
from .fixes import Narrowing as Narrowing
from .fixes import Probe as Probe
from .fixes import ProbeFill as ProbeFill
from .fixes import Verified as Verified
from .fixes import outcome as outcome
from .fixes import reached as reached
from .guards import Guard
from .lowering import Lowering
from .targets import Span


class Kind(str, enum.Enum):
    DATA_DEPENDENT_GUARD = "data-dependent-guard"
    CONSTRAINT_VIOLATION = "constraint-violation"
    SPECIALIZATION = "specialization"
    UNSUPPORTED = "unsupported"
    SPEC_ERROR = "spec-error"
    IMPORT_ERROR = "import-error"
    TIMEOUT = "timeout"
    CRASH = "crash"
    LOWERING = "lowering"
    INTERNAL = "internal"

    def __str__(self) -> str:
        return self.value


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


class Status(str, enum.Enum):
    EXPORTED = "exported"
    FAILED = "failed"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding: the spec line, the guard's origin."""

    path: str
    line: int
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    kind: Kind
    message: str
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    severity: Severity = Severity.ERROR
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    detail: str = ""  # the raw torch text, for "show more"; never the headline
    dims: tuple[str, ...] = ()  # the spec's dims it concerns, named where it is made (hover on a dim finds it)
    cause: Cause = Cause.NONE  # what the error it was made from was, where the owner says it apart (core/causes.py)
    # what it is, whatever is done to it after (moved to today's line, its message shortened): a
    # diagnostic carries it and a code action finds the finding by it; made from what it said where
    # it was made, so a cached verdict's finding and a fresh one's have the same (``finding_id``)
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.line < 1 or self.column < 1:
            raise ValueError(f"finding position must be 1-based: {self.path}:{self.line}:{self.column}")
        if not self.id:
            object.__setattr__(self, "id", finding_id(self))
        elif not _FINDING_ID.fullmatch(self.id):
            raise ValueError(f"not a finding's id: {self.id[:40]!r}")

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


_FINDING_ID = re.compile("[0-9a-f]{16}")


def finding_id(f: Finding) -> str:
    """A digest of what ``f`` says and where: its code, kind, place, message and dims."""
    said = [f.code, str(f.kind), f.path, f.line, f.column, f.end_line, f.end_column, f.message, f.dims]
    text = json.dumps(said, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class LineShapes:
    """Symbolic shapes produced by one source line of ``forward`` (user Dim names)."""

    path: str
    line: int
    shapes: tuple[str, ...]


@dataclass(frozen=True)
class Range:
    """A range torch's program holds a dim to (the user's name; ``None``: unbounded)."""

    name: str
    low: int | None
    high: int | None

    def __str__(self) -> str:
        low = "-∞" if self.low is None else str(self.low)
        return f"{self.name} ∈ [{low}, {'∞' if self.high is None else self.high}]"


@dataclass(frozen=True)
class Summary:
    """What a successful export looks like, in the user's names."""

    signature: str
    inputs: tuple[str, ...]  # "x: f32[batch, seq, 16]"
    outputs: tuple[str, ...]
    range_constraints: tuple[Range, ...]  # shown as "batch ∈ [2, 64]"
    equalities: tuple[Equality, ...]  # shown as "seq2 = seq + 1"
    line_shapes: tuple[LineShapes, ...] = ()
    graph: str = ""
    artifact: str | None = None  # path of the saved .pt2
    guards: tuple[Guard, ...] = ()  # core/guards.py; a default: verdicts cached before 2.2 still decode
    ops: tuple[str, ...] | None = None  # the operators it calls, sorted; None: a report before 2.3 (not known)


@dataclass(frozen=True)
class ModuleReport:
    target: str  # "path.py:Class", path relative to the project root
    status: Status
    findings: tuple[Finding, ...] = ()
    summary: Summary | None = None
    spec_source: str = ""  # where the example inputs came from ("pyproject.toml:12", ...)
    seconds: float = 0.0
    torch_version: str = ""
    cached: bool = False  # answered from an earlier run's verdict on disk (workers/verdicts.py)
    fixes_dropped: int = 0  # fixes given up because building or proving them failed inside exportlens
    probes: tuple[Probe, ...] = ()  # a proof's: the probes it was given, with what each gave (proving/probes.py)
    lowerings: tuple[Lowering, ...] = ()  # each deployment target's (core/lowering.py), after the export's verdict

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)


@dataclass(frozen=True)
class Report:
    modules: tuple[ModuleReport, ...] = ()
    findings: tuple[Finding, ...] = ()  # problems outside any one module (syntax errors, bad pyproject)

    @property
    def all_findings(self) -> tuple[Finding, ...]:
        return self.findings + tuple(f for m in self.modules for f in m.findings)

    @property
    def exit_code(self) -> int:
        return 1 if any(f.severity is Severity.ERROR for f in self.all_findings) else 0


# -- the documented JSON output (docs/json.md): flat, untagged; process boundaries use core.codec

# its version, major.minor: a minor adds fields, a major changes or removes one (a reader refuses a major it
# does not know). 2.5: a finding's "id"; a summary's equalities are records (an older report's texts still
# read); 2.4: a fix's "lowerings"; 2.3: a summary's "ops"; 2.2: its "guards"; 2.1: a fix's "rank"; 2.0: range
# constraints are records
SCHEMA = "2.5"


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
        if isinstance(value, Fix):  # the title a user sees, derived; ``action`` is its beginning
            out = {"title": value.title, **{k: v for k, v in out.items() if k != "action"}}
        return out
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_dict(obj: Any) -> dict[str, Any]:
    return _plain(obj)


def report_json(report: Report) -> dict[str, Any]:
    """``check --format json``'s object: the report, with the version of its schema."""
    return {"schema": SCHEMA, **to_dict(report)}


if TYPE_CHECKING:
    from _typeshed import DataclassInstance
T = TypeVar("T", bound="DataclassInstance")


def from_dict(cls: type[T], data: Any, where: str = "") -> T:
    """The inverse of ``to_dict``: the documented JSON back into ``cls`` (``exportlens merge``
    reads shards' reports with it). Anything that does not fit raises ``ValueError`` naming
    where it is; an unknown field too, since what is kept must be what was read."""
    if not isinstance(data, dict):
        raise _unfit(where, f"expected an object, got {_json_type(type(data))}")
    if cls is Fix and "action" not in data and isinstance(fix := _fix_from(data, where), cls):  # (narrows T)
        return fix
    names = {f.name: f for f in fields(cls)}
    unknown = sorted(data.keys() - names.keys())
    missing = [n for n, f in names.items() if n not in data and f.default is MISSING and f.default_factory is MISSING]
    if unknown or missing:
        raise _unfit(where, f"unknown field {unknown[0]!r}" if unknown else f"no {missing[0]!r}")
    hints = _hints(cls)
    given = {name: _typed(hints[name], value, f"{where}.{name}" if where else name) for name, value in data.items()}
    try:
        return cls(**given)
    except ValueError as e:  # a record's own check (__post_init__)
        raise _unfit(where, str(e)) from None


def _fix_from(data: dict, where: str) -> Fix:
    """A fix's JSON, whose ``title`` is its action and the suffix its other fields derive."""
    title = data.get("title")
    if not isinstance(title, str):
        raise _unfit(where, "no 'title'" if title is None else "title: expected a string")
    fix = from_dict(Fix, {"action": title, **{k: v for k, v in data.items() if k != "title"}}, where)
    end = fix.title[len(title) :]
    if end and not title.endswith(end):
        raise _unfit(where, f"its title does not end with what it reached: {end.strip()!r}")
    return replace(fix, action=title[: len(title) - len(end)])


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)  # (evaluates every annotation's text: once per class, not per record)


def _typed(hint: Any, value: Any, where: str) -> Any:
    """``value`` (JSON) as the field's type ``hint``: a dataclass, enum, tuple, optional or scalar."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (hint,) = (a for a in args if a is not type(None))
        return _typed(hint, value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise _unfit(where, f"expected a list, got {_json_type(type(value))}")
        return tuple(_typed(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if hint is Equality and isinstance(value, str):  # a report before 2.5 wrote an equality as its text
        try:
            return Equality.of_text(value)
        except ValueError as e:
            raise _unfit(where, str(e)) from None
    if isinstance(hint, type) and is_dataclass(hint):
        return from_dict(hint, value, where)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if any(value == m.value for m in hint):
            return hint(value)
        raise _unfit(where, f"{value!r} is not one of {', '.join(m.value for m in hint)}")
    if hint is float and type(value) in (int, float):
        return float(value)
    if type(value) is hint:  # not isinstance: JSON's true is no line number
        return value
    raise _unfit(where, f"expected {_json_type(hint)}, got {_json_type(type(value))}")


def _unfit(where: str, problem: str) -> ValueError:
    return ValueError(f"{where}: {problem}" if where else problem)


def _json_type(cls: type) -> str:
    names = {bool: "true or false", int: "a number", float: "a number", str: "a string", list: "a list"}
    return (names | {dict: "an object"}).get(cls, "null")
