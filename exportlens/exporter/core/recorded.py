"""What ``exportlens record`` saw of a real run: per project module class, its constructor's
plain arguments and the inputs of a few calls. Written by the recorder inside the user's
processes (runtime/recorder.py), read by the owner (exportlens/record.py) with ``CODEC``:
untrusted text, so only these types come back. Standard library only."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .codec import Codec

TARGETS_FILE = "targets.json"  # in the recording folder: which classes to watch
CALLS_FOLDER = "calls"  # one file per process that saw a watched class called
FOLDER_VARIABLE = "EXPORTLENS_RECORD"  # the recording folder, for the user's processes
USER_PATH_VARIABLE = "EXPORTLENS_RECORD_USER_PATH"  # the command's own PYTHONPATH, as JSON (null: unset)


class Kind(enum.Enum):
    TENSOR = "tensor"
    VALUE = "value"  # a plain value the spec writes as it is: int, float, bool, str, None, lists of them
    OTHER = "other"  # something a spec cannot write (an object, a list of tensors)


@dataclass(frozen=True)
class Seen:
    """One input of one call."""

    kind: Kind
    dtype: str = ""  # torch's name, "float32"
    shape: tuple[int, ...] = ()
    value: Any = None
    type_name: str = ""  # what an OTHER was


@dataclass(frozen=True)
class Call:
    inputs: tuple[tuple[str, Seen], ...]  # forward's parameters by name, in its order


@dataclass(frozen=True)
class Recorded:
    """The calls of one class's instances built with one set of constructor arguments."""

    target: str  # "path.py:Class", the index's
    init: dict[str, Any]  # the arguments given (not defaults), each a plain value
    unwritten: tuple[str, ...] = ()  # arguments given that are no plain value
    calls: tuple[Call, ...] = ()
    seen: int = 0  # calls seen, kept or not


@dataclass(frozen=True)
class Recording:
    """One process's recording."""

    records: tuple[Recorded, ...] = field(default_factory=tuple)


CODEC = Codec(Recording)  # a recording and every record its fields reach
