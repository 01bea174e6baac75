"""The report: plain data that crosses every boundary (worker -> CLI / server).

Lines and columns are 1-based; ``end_column`` is exclusive. Paths are
relative to the project root, in POSIX form. Nothing here imports torch.
"""

from __future__ import annotations

import enum
import types
from dataclasses import MISSING, dataclass, fields, is_dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin, get_type_hints

from .guards import Guard
from .lowering import Lowering, lowered_suffix
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
class Edit:
    """Replace ``[line:column, end_line:end_column)`` of ``path`` with ``new_text``."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str

    def __post_init__(self) -> None:
        if (self.end_line, self.end_column) < (self.line, self.column):
            raise ValueError(f"edit ends before it starts: {self}")


PROBE_FILLS = ("example", "zeros", "ones", "negative", "large", "random", "declared", "cleared", "set")


@dataclass(frozen=True)
class DimSize:
    """A dim at another size than its example's (a probe at a declared bound)."""

    dim: str
    size: int


@dataclass(frozen=True)
class Probe:
    """Inputs on which a fix's exported program is compared with the module as the user wrote
    it (runtime/proving/probes.py): the example inputs with other values (``fill``, drawn with
    ``seed``). ``agrees`` is what the owner's proof found: None before (or where eager itself
    fails on them), False where the program rejects them or answers otherwise."""

    name: str  # "example inputs", "zeros", "random (seed 2)"
    fill: str = "example"  # example | zeros | ones | negative | large | random | declared (the class's probe_inputs())
    seed: int = 0  # random: the draw; declared: which of probe_inputs()
    sizes: tuple[DimSize, ...] = ()  # dims at other sizes than the example's
    agrees: bool | None = None
    rejected: bool = False  # the program raised on them (a runtime assertion), where eager runs
    said: str = ""  # how the program differed, in one line

    def __str__(self) -> str:
        return self.name


class Narrowing(str, enum.Enum):
    """How much of what the module serves a fix gives up, set where the fix is made, least first
    (``order``): the preferred fix narrows least of those proven to leave no problem (workers/fix_preference.py)."""

    REWRITE = "rewrite"  # the code says the same in a form torch keeps: every size and value served
    BRANCH_FREE = "branch-free"  # a test dropped where one side adds nothing: a rewrite, once its probes agree
    EXAMPLE = "example"  # the example's size changed: every declared size still served
    RELATION = "relation"  # a dim tied to another (``seq2 = seq + 1``): each still ranges
    RANGE = "range"  # a dim's declared range cut
    ASSUMPTION = "assumption"  # ``torch._check`` of one side: the program rejects the other
    STATIC = "static"  # a dim made one size

    @property
    def order(self) -> int:
        """Its place, least first; a branch-free form ranks as the rewrite it is (its probes say which to prefer)."""
        return max(list(Narrowing).index(self) - 1, 0)


class Verified(str, enum.Enum):
    """What the owner's proof reached with a fix applied (workers/proofs.py); the title's
    suffix is written from it (``Fix.title``), never stored beside it."""

    SERVES = "serves"  # exports, and the program agrees with eager at the declared bounds
    EXPORTS = "exports"  # exports on meta, where nothing runs
    PARTIAL = "partial"  # this problem is gone, ``remaining`` others are left
    UNVERIFIED = "unverified"  # not tried, or the try did not finish

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Fix:
    action: str  # what it does, as its title begins; what it reached is derived (``title``)
    edits: tuple[Edit, ...]
    preferred: bool = False
    verified: Verified = Verified.UNVERIFIED  # exported with it applied (workers/proofs.py)
    probes: tuple[Probe, ...] = ()  # where the proof compares it with eager (a data-dependent branch's remedies)
    remaining: int = 0  # partial: how many problems its last export still had
    rank: Narrowing = Narrowing.REWRITE  # how much it narrows: set where it is made, ordered (``Narrowing``)
    lowerings: tuple[Lowering, ...] = ()  # the spec's targets, lowered with it applied (its proof's)

    def __str__(self) -> str:
        return self.title

    @property
    def title(self) -> str:
        """The title a user sees: the action, then what its proof reached."""
        reached = outcome(self)
        return f"{self.action} ({reached})" if reached else self.action

    @property
    def passes_probes(self) -> bool:
        """Proven, and its program agrees with eager on every probe that was compared (none
        rejected or answered otherwise): what may be preferred."""
        compared = [p.agrees for p in self.probes if p.agrees is not None]
        return self.verified != Verified.UNVERIFIED and all(compared) and (bool(compared) or not self.probes)


def outcome(fix: Fix) -> str:
    """What a fix's title says it reached, from ``verified`` (and its probes) alone: a proven
    fix whose program rejects some probes is an assumption, and says so (one suffix, not two)."""
    if fix.verified == Verified.UNVERIFIED:
        return ""
    rejected = [p for p in fix.probes if p.rejected]
    if rejected:
        return (
            "an assumption: the exported program rejects inputs where it does not hold:"
            f" {rejected[0].name}, {len(rejected)} of {len(fix.probes)} probes"
        )
    return reached(fix.verified, fix.remaining) + lowered_suffix(fix.lowerings)


def reached(verified: Verified, remaining: int = 0) -> str:
    """What a proven fix reached, in words: from ``verified`` alone (and, for a partial
    one, how many problems are left)."""
    if verified == Verified.SERVES:
        return "module then exports and serves its ranges"
    if verified == Verified.EXPORTS:
        return "module then exports"
    if verified == Verified.UNVERIFIED:
        return ""
    left = remaining
    return f"{left} more problem{'s' if left != 1 else ''} remain{'s' if left == 1 else ''}"


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

    def __post_init__(self) -> None:
        if self.line < 1 or self.column < 1:
            raise ValueError(f"finding position must be 1-based: {self.path}:{self.line}:{self.column}")

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


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
    equalities: tuple[str, ...]  # "seq2 = seq + 1"
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
# does not know). 2.4: a fix's "lowerings"; 2.3: a summary's "ops"; 2.2: its "guards"; 2.1: a fix's "rank";
# 2.0: range constraints are records
SCHEMA = "2.4"


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
