"""The worker protocol: the only module both the pool (owner side, no torch) and the
worker (torch side) import. Messages are frozen dataclasses; on the wire each is one
JSON line written by ``encode`` and read by ``decode`` (core.codec: no pickle).

    owner -> worker   Run(id, job) | Shutdown()
    worker -> owner   Ready(...) once warm, then per job Started(id, pid) and Done(id, end, ...)
    job's child -> worker   its End: Reported | Exited | OutOfMemory | Internal

How a job ended (``Done.end``): ``Reported`` (the export's own report), ``Exited`` (the
user's code called sys.exit), ``OutOfMemory``, ``Internal`` (a bug of ours), or
``Died`` (no result: a signal or an exit status). ``Lost`` is the owner's own record of
a worker process that went away with jobs on it; it never crosses the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.codec import Codec, CodecError
from ..core.options import Options
from ..core.report import (
    DimSize,
    Edit,
    Finding,
    Fix,
    Kind,
    LineShapes,
    ModuleReport,
    Probe,
    Range,
    Related,
    Severity,
    Status,
    Summary,
    Verified,
)
from ..core.settings import Overrides, Settings
from ..core.sources import Sources
from ..core.targets import Forward, Location, ModuleClass, Param, Span, Target
from ..spec.loading import DimSpec, ExportSpec, IntInput, ProjectSpecs, TensorInput, ValueInput
from ..spec.plan import Plan, Planned
from ..spec.shapes import Derived, Shape
from ..spec.values import Call, Ref

VERSION = 1  # Ready carries it; an owner refuses a worker of another version


# a spare's last word on its stderr, where its job's output went: what came before is the job's
FAULT = "fault"  # a spare's crash report (faulthandler's), in the owner's scratch folder for it
OUTPUT_ENDS = b"\n\x00exportlens: the job's output ends here\x00\n"


@dataclass(frozen=True)
class OwnerPlan:
    """The owner's static plan of one module, so the worker need not parse the project
    again, with digests of the texts it was made from: a worker that would import other
    text (a file saved meanwhile) plans again."""

    plan: Plan
    digests: dict[str, str]  # project-relative path -> digest of the text planned from


@dataclass(frozen=True)
class Job:
    """One module to export: everything the worker needs."""

    root: str
    target: str  # "path.py:Class"
    class_line: int  # where crash and timeout findings go: the class name
    options: Options = Options()
    timeout: float = 60.0
    memory_limit: int | None = 8 << 30
    sandbox: bool = True  # confine the job's file access (sandbox.py)
    key: str = ""  # cache key; "" = do not cache
    sources: dict[str, str] = field(default_factory=dict)  # project-relative path -> unsaved text
    class_column: int = 1
    class_end_column: int | None = None
    plan: OwnerPlan | None = None  # None: the worker plans
    device: str = "cpu"  # the effective device: findings about memory suggest meta where it is not
    preload: tuple[str, ...] = ()  # third-party packages the module imports: the warm worker imports them once

    @property
    def path(self) -> str:
        return Target.parse(self.target).path


@dataclass(frozen=True)
class Run:
    id: str
    job: Job


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class Ready:
    pid: int
    torch: str
    torch_file: str
    python: str
    version: int = VERSION


@dataclass(frozen=True)
class Started:
    id: str
    pid: int


@dataclass(frozen=True)
class Reported:
    report: ModuleReport
    # the owner's plan was made from other texts than the job imported (a file saved while
    # it was queued): the verdict is not the one its cache key describes
    replanned: bool = False


@dataclass(frozen=True)
class Exited:
    """The user's code called sys.exit."""

    status: int
    message: str


@dataclass(frozen=True)
class OutOfMemory:
    pass


@dataclass(frozen=True)
class Internal:
    trace: str


@dataclass(frozen=True)
class Died:
    """The job's process ended without a result."""

    status: int | None = None  # exit status
    signal: int | None = None  # or the signal that killed it


End = Reported | Exited | OutOfMemory | Internal | Died


@dataclass(frozen=True)
class Done:
    id: str
    end: End
    output: str = ""  # the tail of what the job printed
    fault: str = ""  # faulthandler's report of a crash


@dataclass(frozen=True)
class Lost:
    """Owner side only: the worker process went away (``startup``: before it was ready)."""

    why: str
    stderr: str = ""
    startup: bool = False
    status: int | None = None  # its exit status (negative: the signal that killed it)


Message = Run | Shutdown | Ready | Started | Done

CODEC = Codec(
    # the messages
    OwnerPlan, Job, Run, Shutdown, Ready, Started, Reported, Exited, OutOfMemory, Internal, Died, Done,
    # what they carry: options, plans, specs, modules, reports
    Options, Overrides, Plan, Planned, Sources, ProjectSpecs, Settings, ExportSpec, Location, DimSpec, TensorInput, ValueInput, IntInput, Shape, Derived,
    ModuleClass, Forward, Param, Span, Ref, Call,
    ModuleReport, Finding, Fix, Verified, Probe, DimSize, Edit, Related, Summary, Range, LineShapes,
    Kind, Severity, Status,
)  # fmt: skip


def encode(message: Message | End) -> bytes:
    return CODEC.dumps(message).encode() + b"\n"


def encode_run(run: Run) -> bytes:
    """A Run as one line, encoded once. A plan holding a value JSON cannot carry (a TOML
    date in some table) is left out: the worker then plans the module itself."""
    try:
        return encode(run)
    except CodecError:
        return encode(replace(run, job=replace(run.job, plan=None)))


def decode(line: bytes | str, *expected: type) -> Message | End:
    """One line as a message of one of the ``expected`` types; CodecError otherwise."""
    message = CODEC.loads(line)
    if not isinstance(message, expected):
        raise CodecError(f"expected {' or '.join(t.__name__ for t in expected)}, got {type(message).__name__}")
    return message
