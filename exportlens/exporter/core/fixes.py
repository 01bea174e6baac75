"""A fix and what it is made of: the edits it proposes, the probes its proof compares on,
how much it narrows (``Narrowing``) and what its proof reached (``Verified``). Plain data;
``core/report.py`` re-exports each, as a finding holds its fixes."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .lowering import Lowering, lowered_suffix


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


class ProbeFill(str, enum.Enum):
    """What values a probe gives the example inputs (runtime/proving/probes.py), set where the probe is made."""

    EXAMPLE = "example"  # the example inputs as they are
    ZEROS = "zeros"
    ONES = "ones"
    NEGATIVE = "negative"  # the example's values negated
    LARGE = "large"  # the example's values scaled up
    RANDOM = "random"  # drawn with the probe's seed
    DECLARED = "declared"  # the class's probe_inputs(), the seed-th of them
    CLEARED = "cleared"  # masks all false
    SET = "set"  # masks all true

    def __str__(self) -> str:
        return self.value


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
    fill: ProbeFill = ProbeFill.EXAMPLE
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
