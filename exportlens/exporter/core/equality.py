"""``Equality``: a size torch tied to the spec's dims, as a record (a summary's
``equalities``), so that a reader asks it which dims it names rather than searching its
text. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass

_SAID = " = "


@dataclass(frozen=True)
class Equality:
    """``left = right``: an input's axis (``y.shape[0]``) and the size torch made it (``seq + 1``)."""

    left: str  # the axis as the code reads it
    right: str  # an expression over the user's dim names
    dims: tuple[str, ...] = ()  # the sizes ``right`` names, sorted, as it names them; () in a report before 2.5

    def __str__(self) -> str:
        return f"{self.left}{_SAID}{self.right}"

    @classmethod
    def of_text(cls, text: str) -> Equality:
        """An equality as a report before schema 2.5 wrote it (``str``); ValueError where it is not one."""
        left, said, right = text.partition(_SAID)
        if not said or not left or not right:
            raise ValueError(f"{text!r} is no equality (left = right)")
        return cls(left, right)
