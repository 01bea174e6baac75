"""Why an export runs: a kind the scheduler passes along and compares, and the one place
its words for the log are made."""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Why(enum.Enum):
    """What asked for an export; each value is how the log says it."""

    OPEN = "open"  # a document was opened
    CHANGE = "change"  # edited, with exportOn = change
    SAVE = "save"
    DISK = "changed on disk"  # by another program, not the editor's own save
    TRUST = "trust granted"  # the workspace was trusted: what is open is exported
    COMMAND = "command"  # the user asked for this export
    CHECK = "workspace check"
    REVERIFY = "re-verify"  # a verdict from an earlier session's cache is checked again

    @property
    def fresh(self) -> bool:
        """It must be exported, never answered from the verdict cache: the user asked, or
        the cached verdict is what is being checked."""
        return self in (Why.COMMAND, Why.REVERIFY)


Whys = tuple[Why, ...]  # a batch's: each due file's own


def said(whys: Iterable[Why]) -> str:
    """The reasons of one batch, each once, as the log says them: "save, change"."""
    return ", ".join(dict.fromkeys(why.value for why in whys))
