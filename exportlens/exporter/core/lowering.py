"""What lowering an exported program for a deployment target gave (standard library only).

One ``Lowering`` per target a module's spec names (``targets = ["aoti", "onnx"]``): the
worker compiles the program for it after the export's own verdict is in, runs the
artifact against eager on the example inputs and at each dim's declared bounds, and
says what that gave. What went wrong is a finding of its own (EL6xx) in the module's
findings; this record is the data beside it: time, size, the largest error seen."""

from __future__ import annotations

from dataclasses import dataclass

COMPILED = "compiled"  # lowered, and its artifact ran where it was run
FAILED = "failed"  # lowering raised, or the artifact refused or differed (a finding says where)
UNAVAILABLE = "unavailable"  # the target's packages are not installed (a finding says what to install)


@dataclass(frozen=True)
class Lowering:
    target: str  # "aoti" | "onnx" | "executorch"
    status: str  # COMPILED | FAILED | UNAVAILABLE
    seconds: float = 0.0  # compiling, not running
    size: int = 0  # the artifact's bytes
    max_error: float | None = None  # the largest |artifact - eager| over every size compared
    sizes: tuple[str, ...] = ()  # where it was compared with eager: "example", "batch = 64"

    def __str__(self) -> str:
        return f"compiled for {self.target} in {self._numbers()}" if self.status == COMPILED else self.said(True)

    def said(self, named: bool = False) -> str:
        """What it gave: "compiled in 3.6 s, 2.4 KB, max error 1e-07", "failed"; ``named``: after "onnx: "."""
        said = f"compiled in {self._numbers()}" if self.status == COMPILED else self.status
        return f"{self.target}: {said}" if named else said

    def _numbers(self) -> str:
        error = "" if self.max_error is None else f", max error {self.max_error:.1g}"
        return f"{self.seconds:.1f} s, {_size(self.size)}{error}"


def _size(size: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def lowered_suffix(lowerings: tuple[Lowering, ...]) -> str:
    """What a fix's proof said of the spec's targets, after what it reached (a fix's title):
    "; lowers for executorch", "; does not lower for executorch", "" where none is declared."""
    said = {COMPILED: "lowers for", FAILED: "does not lower for", UNAVAILABLE: "not lowered (not installed) for"}
    return "".join(f"; {said.get(lowering.status, lowering.status)} {lowering.target}" for lowering in lowerings)


def lowers(lowerings: tuple[Lowering, ...]) -> bool:
    """Whether every target compiled (true where none is declared)."""
    return all(lowering.status == COMPILED for lowering in lowerings)
