"""What an error raised in a job was, where the owner treats it apart (no torch): declared
on the torch side where the job turns the error into a finding (``Finding.cause``), from
the exception itself, and read by the owner (workers/outcome.py), which has neither torch
to ask nor any business reading the finding's words."""

from __future__ import annotations

import enum


class Cause(str, enum.Enum):
    NONE = "none"  # no error, or one the owner says as the job did
    OUT_OF_MEMORY = "out-of-memory"  # an allocation refused: under the job's memory cap, not the user's error
    REFUSED = "refused"  # a PermissionError: the system refused the job something (under the sandbox, the sandbox)

    def __str__(self) -> str:
        return self.value
