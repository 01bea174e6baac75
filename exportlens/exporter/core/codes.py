"""Stable diagnostic codes. docs/diagnostics.md documents each one; never renumber."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .report import Finding, Kind, ModuleReport, Severity
from .targets import Span


@dataclass(frozen=True)
class Code:
    code: str
    kind: Kind
    title: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return self.code


# spec errors: the export spec itself is wrong (EL0xx)
SPEC_SIGNATURE = Code("EL001", Kind.SPEC_ERROR, "spec does not match forward's signature")
SPEC_DTYPE = Code("EL002", Kind.SPEC_ERROR, "unknown dtype")
SPEC_SHAPE = Code("EL003", Kind.SPEC_ERROR, "malformed shape string")
SPEC_DIMS = Code("EL004", Kind.SPEC_ERROR, "bad dims table")
SPEC_INVALID = Code("EL005", Kind.SPEC_ERROR, "invalid export spec")
SPEC_TOML = Code("EL006", Kind.SPEC_ERROR, "pyproject.toml does not parse")
SPEC_MISSING = Code("EL007", Kind.SPEC_ERROR, "no example inputs", Severity.INFO)
UNUSED_SUPPRESSION = Code("EL008", Kind.SPEC_ERROR, "suppression hides nothing", Severity.WARNING)

# data-dependent control flow (EL1xx)
DATA_DEPENDENT = Code("EL101", Kind.DATA_DEPENDENT_GUARD, "guard on a data-dependent value")

# constraints on declared dims (EL2xx)
RANGE_VIOLATION = Code("EL201", Kind.CONSTRAINT_VIOLATION, "declared range of a dim is too wide")
EQUALITY_VIOLATION = Code("EL202", Kind.CONSTRAINT_VIOLATION, "dims declared independent must be equal")
RELATION_VIOLATION = Code("EL203", Kind.CONSTRAINT_VIOLATION, "dim is tied to another dim")
SPECIALIZED = Code("EL204", Kind.SPECIALIZATION, "a dim declared dynamic was specialized")
GUARD_VIOLATION = Code("EL205", Kind.CONSTRAINT_VIOLATION, "code requires a condition on a dim")
UNSERVED_RANGE = Code("EL206", Kind.CONSTRAINT_VIOLATION, "exported program fails inside the declared ranges")
BAKED_INT = Code("EL207", Kind.SPECIALIZATION, "an int input is baked into the program", Severity.WARNING)

# unsupported operations (EL3xx)
UNSUPPORTED_OP = Code("EL301", Kind.UNSUPPORTED, "operation not supported by torch.export")
MISSING_FAKE_KERNEL = Code("EL302", Kind.UNSUPPORTED, "custom op has no fake kernel")
MISMATCHED_FAKE_KERNEL = Code("EL303", Kind.UNSUPPORTED, "custom op's fake kernel disagrees with its real kernel")
UNSUPPORTED_OUTPUT = Code("EL304", Kind.UNSUPPORTED, "forward returns a type export cannot flatten")
EXPORT_ONLY_FAILURE = Code("EL305", Kind.UNSUPPORTED, "forward raises only while exporting")

# the user's code does not load (EL4xx)
SYNTAX_ERROR = Code("EL401", Kind.IMPORT_ERROR, "file does not parse")
IMPORT_FAILED = Code("EL402", Kind.IMPORT_ERROR, "module file fails to import")
CONSTRUCT_FAILED = Code("EL403", Kind.IMPORT_ERROR, "module cannot be constructed")
INPUTS_FAILED = Code("EL404", Kind.SPEC_ERROR, "example inputs cannot be built")
FORWARD_FAILED = Code("EL405", Kind.IMPORT_ERROR, "forward raises on the example inputs")

# the export process itself (EL5xx)
TIMEOUT = Code("EL501", Kind.TIMEOUT, "export timed out")
CRASH = Code("EL502", Kind.CRASH, "export process crashed")
MEMORY = Code("EL503", Kind.CRASH, "export exceeded the memory limit")
REFUSED = Code("EL504", Kind.CRASH, "export process's report refused")
TOO_WIDE = Code("EL505", Kind.SPEC_ERROR, "project folder too wide to sandbox")
TORCH_UNSUPPORTED = Code("EL506", Kind.CRASH, "installed torch is older than the supported range")
# the process was stopped before its export ended: a busy machine or a worker gone may do that
STOPPED = frozenset(c.code for c in (TIMEOUT, CRASH, MEMORY))


def stopped(report: ModuleReport) -> bool:
    """Whether ``report`` tells of a process stopped before its export ended (a timeout, a crash,
    the memory limit), rather than of what the module's code does."""
    return bool(stops((report,)))


# lowering an exported program for a deployment target (EL6xx): docs/targets.md
LOWERING_UNSUPPORTED = Code("EL601", Kind.LOWERING, "operation has no translation for the target")
LOWERING_FAILED = Code("EL602", Kind.LOWERING, "lowering for the target failed")
LOWERED_DIFFERS = Code("EL603", Kind.LOWERING, "lowered program's outputs differ from eager")
LOWERED_SIZES = Code("EL604", Kind.LOWERING, "lowered program refuses a declared size or accepts a wrong one")
TARGET_MISSING = Code("EL605", Kind.LOWERING, "target's packages are not installed")

# anything torch said that we could not place (EL9xx)
INTERNAL = Code("EL901", Kind.INTERNAL, "torch.export failed")

ALL: tuple[Code, ...] = tuple(v for v in globals().values() if isinstance(v, Code))
BY_CODE: dict[str, Code] = {c.code: c for c in ALL}

DOCS_URL = "https://github.com/exportlens/exportlens/blob/main/docs/diagnostics.md"


def docs_url(code: str) -> str:
    return f"{DOCS_URL}#{code.lower()}"


def finding(code: Code, message: str, path: str, line: int, **kwargs) -> Finding:
    """A Finding carrying ``code``'s code, kind and default severity."""
    kwargs.setdefault("severity", code.severity)
    return Finding(code=code.code, kind=code.kind, message=message, path=path, line=line, **kwargs)


def finding_at(code: Code, message: str, path: str, span: Span, **kwargs) -> Finding:
    """A finding over ``span`` in ``path``."""
    return finding(
        code, message, path, span.line, column=span.column, end_line=span.end_line, end_column=span.end_column, **kwargs
    )


def stops(reports: Iterable[object]) -> dict[str, str]:
    """Each way the exports of ``reports`` were stopped, once: code -> the finding's message."""
    return {f.code: f.message for r in reports if isinstance(r, ModuleReport) for f in r.findings if f.code in STOPPED}
