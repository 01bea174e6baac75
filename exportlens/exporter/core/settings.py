"""How an export runs, whoever says so: the project's ``[tool.exportlens]``, a module's
own table, the editor's settings, the command line. Every value from any of them is
checked by ``check`` here, and they combine in one order, ``effective``: the project,
then the module's table, then the editor or the command line (standard library only)."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, fields, replace
from typing import Any

DEVICES = re.compile(r"^(cpu|meta|mps|cuda(:(?P<index>\d{1,4}))?)$")
MAX_DEVICE = 1023  # cuda:N: no machine has more devices; a longer index is a typo (and overflows torch's int)
IRS = ("training", "core-aten")
NAMES = ("device", "strict", "ir", "timeout", "memory_limit", "sandbox")
MAX_TIMEOUT = 7 * 24 * 3600.0  # seconds: a week; longer is a typo, and past ~1e9 the clock overflows
MIN_MEMORY = 256 << 20  # bytes: below this the export's process cannot even import torch
MAX_MEMORY = 16 << 40  # bytes: more than any one machine holds; past ~8 EiB the cap overflows the kernel's limit


@dataclass(frozen=True)
class Settings:
    """What an export uses, every value set."""

    device: str = "cpu"
    strict: bool = False
    ir: str = "training"
    timeout: float = 60.0  # seconds, from the export's own process start
    memory_limit: str = "8GiB"  # what the export's processes may add
    sandbox: bool = True  # confine the export's file access (workers/sandbox.py), where the kernel can


@dataclass(frozen=True)
class Overrides:
    """What the editor or the command line sets over the project; None: the project decides."""

    device: str | None = None
    strict: bool | None = None
    ir: str | None = None
    timeout: float | None = None
    memory_limit: str | None = None
    sandbox: bool | None = None


def effective(settings: Settings, overrides: Overrides) -> Settings:
    return replace(settings, **{f.name: v for f in fields(overrides) if (v := getattr(overrides, f.name)) is not None})


def check(name: str, value: Any) -> Any:
    """``value`` for setting ``name`` as it is used, or ValueError whose message is what is
    expected ("one of training, core-aten"), for each caller to put in its own sentence.
    Never reads a value as something else (``"no"`` is no boolean)."""
    if name == "device" and isinstance(value, str) and (m := DEVICES.match(value)) and int(m["index"] or 0) <= MAX_DEVICE:
        return value
    if name in ("strict", "sandbox") and isinstance(value, bool):
        return value
    if name == "ir" and value in IRS:
        return value
    if name == "timeout" and isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_TIMEOUT:
        return float(value)  # NaN fails the comparison too
    if name == "memory_limit" and MIN_MEMORY <= (parse_bytes(value) or 0) <= MAX_MEMORY:
        return str(value)
    expected = {
        "device": f"one of cpu, cuda, cuda:N, mps, meta (N at most {MAX_DEVICE})",
        "strict": "true or false",
        "sandbox": "true or false",
        "ir": f"one of {', '.join(IRS)}",
        "timeout": f"a number of seconds above 0 and at most {MAX_TIMEOUT:.0f} (a week)",
        "memory_limit": "a size like 8GiB, at least 256MiB and at most 16TiB",
    }
    raise ValueError(expected[name])


def interpreter(value: Any) -> str:
    """The Python that runs exports: an executable file, or a command on PATH, as a path;
    ValueError saying what is wrong. Checked where it is set, so a typo is a refusal then,
    not a dead worker later."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a path to a Python interpreter")
    found = shutil.which(value) if os.sep not in value else (value if os.path.isfile(value) and os.access(value, os.X_OK) else None)
    if found is None:
        raise ValueError("an interpreter: " + ("no such file" if not os.path.exists(value) else "not an executable file"))
    return found


def jobs(value: Any) -> int:
    """Exports at a time: a whole number ≥ 1; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("a whole number ≥ 1")
    return value


def parse_bytes(value: Any) -> int | None:
    """``"8GiB"``, ``"512 MB"``, ``"1.5G"`` or a positive int, in bytes; None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*", str(value), re.IGNORECASE)
    if not m or isinstance(value, bool):
        return None
    unit = (m.group(2) or "B").upper().rstrip("B").rstrip("I")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[unit]
    return int(float(m.group(1)) * scale) or None
