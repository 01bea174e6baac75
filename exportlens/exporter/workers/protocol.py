"""The worker protocol: the only module both the pool (owner side, no torch) and the
worker (torch side) import. Messages are frozen dataclasses; on the wire each is one
JSON line written by ``encode`` and read by ``decode`` (core.codec: no pickle).

    owner -> worker   Run(id, job) | Shutdown()
    worker -> owner   Ready(...) once warm, then per job Started(id, pid) and Done(id, end, ...)
    job's child -> worker   its End: Reported (TreeReported: a Task.TREE job's) | Exited | OutOfMemory | Internal

How a job ended (``Done.end``): ``Reported`` (the export's own report), ``Exited`` (the
user's code called sys.exit), ``OutOfMemory``, ``Internal`` (a bug of ours), or
``Died`` (no result: a signal or an exit status). ``Lost`` is the owner's own record of
a worker process that went away with jobs on it; it never crosses the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypeVar, overload

from ..core.codec import TYPE, Codec, CodecError
from ..core.options import Options, Task
from ..core.report import ModuleReport
from ..core.targets import Span, Target
from ..core.tree import SubmoduleTree
from ..spec.loading import HELD
from ..spec.plan import Plan

VERSION = 1  # Ready carries it; an owner refuses a worker of another version


# A job's End is one line of at most this many bytes. Whoever reads lines a job's process
# writes (the warm parent its result pipe, the owner a spare's stdout) holds no more than
# this of a line, and stops the job past it: a module that writes gigabytes with no end of
# line must not take its reader's memory with it.
RESULT_MAX = 256 << 20
DONE_MAX = RESULT_MAX + (4 << 20)  # a warm parent's Done: a child's End, and the tails of its output and crash

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
    name_span: Span  # the class name: where crash and timeout findings go
    options: Options = Options()
    timeout: float = 60.0
    memory_limit: int | None = 8 << 30
    sandbox: bool = True  # confine the job's file access (sandbox.py)
    key: str = ""  # cache key; "" = do not cache
    sources: dict[str, str] = field(default_factory=dict)  # project-relative path -> unsaved text
    plan: OwnerPlan | None = None  # None: the worker plans
    device: str = "cpu"  # the effective device: findings about memory suggest meta where it is not
    preload: tuple[str, ...] = ()  # third-party packages the module imports: the warm worker imports them once
    task: Task = Task.SERVE  # what it does: a TREE job ends in TreeReported, any other in Reported

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
class TreeReported:
    """A ``Task.TREE`` job's end: each submodule's verdict."""

    tree: SubmoduleTree


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
    overlong: bool = False  # or it was stopped for a protocol line past ``RESULT_MAX`` (``Lines``)


End = Reported | TreeReported | Exited | OutOfMemory | Internal | Died
ENDS = (Reported, TreeReported, Exited, OutOfMemory, Internal)  # how a job's child says it ended, in its one line


@dataclass(frozen=True)
class Encoded:
    """A child's End as it wrote it, one protocol line: the warm parent passes it on in
    ``Done.end`` as it is (a report can be megabytes: decoding and encoding it again there
    was half its trip), and the owner decodes it, once (``ended``)."""

    line: str

    @classmethod
    def of(cls, line: str) -> Encoded | None:
        """``line`` where it is a child's End (by its type, written first); else None."""
        return cls(line) if line.startswith(_END_TAGS) else None


_END_TAGS = tuple(f'{{"{TYPE}":"{t.__name__}"' for t in ENDS)


@dataclass(frozen=True)
class Done:
    id: str
    end: End | Encoded
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

# the messages and every record their fields reach (core/codec.py); a spec's ``Any`` values hold HELD
CODEC = Codec(Message, End, Encoded, *HELD)


def encode(message: Message | End) -> bytes:
    return CODEC.dumps(message).encode() + b"\n"


def encode_run(run: Run) -> bytes:
    """A Run as one line, encoded once. A plan holding a value JSON cannot carry (a TOML
    date in some table) is left out: the worker then plans the module itself."""
    try:
        return encode(run)
    except CodecError:
        return encode(replace(run, job=replace(run.job, plan=None)))


def ended(done: Done) -> Done:
    """``done`` with its End decoded (the owner's side). A line with an End's tag that does not
    decode was written by the job's process, not by exportlens: the module's crash, like any
    other end without a report."""
    if not isinstance(done.end, Encoded):
        return done
    try:
        end = decode(done.end.line, *ENDS)
    except CodecError:
        end = Died()
    return replace(done, end=end if isinstance(end, ENDS) else Died())  # (``decode`` checked it is one)


class Lines:
    """Whole lines cut from a stream's chunks, each at most ``limit`` bytes. A line that
    grows past it sets ``overlong`` and is dropped, with all that follows: the reader then
    stops the writer, which runs user code. Only each new chunk is searched for its end."""

    def __init__(self, limit: int = RESULT_MAX) -> None:
        self.limit = limit
        self.pending = bytearray()  # the line begun and not yet ended
        self.overlong = False

    def feed(self, chunk: bytes) -> list[bytes]:
        if self.overlong:
            return []
        lines, start = [], 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self.pending += chunk[start:end]
            lines.append(bytes(self.pending))
            self.pending.clear()
            start = end + 1
        self.pending += chunk[start:]
        if len(self.pending) > self.limit or any(len(line) > self.limit for line in lines):
            self.overlong = True
            self.pending = bytearray()
            return []
        return lines


_A = TypeVar("_A", bound="Message | End")
_B = TypeVar("_B", bound="Message | End")


@overload
def decode(line: bytes | str, expected: type[_A], /) -> _A: ...
@overload
def decode(line: bytes | str, expected: type[_A], other: type[_B], /) -> _A | _B: ...
@overload
def decode(line: bytes | str, *expected: type) -> Message | End: ...
def decode(line: bytes | str, *expected: type) -> Message | End:
    """One line as a message of one of the ``expected`` types; CodecError otherwise."""
    message: Message | End = CODEC.loads(line)  # (what it is, is checked against ``expected`` next)
    if not isinstance(message, expected):
        raise CodecError(f"expected {' or '.join(t.__name__ for t in expected)}, got {type(message).__name__}")
    return message
