"""How an export runs, whoever says so: the project's ``[tool.exportlens]``, a module's
own table, the editor's settings, the command line.

``SETTINGS`` is the one declaration of every setting: its name, type, default, allowed
values, help, and where it applies. The CLI's options (cli_settings.py), the server's
reader (server/settings.py) and pyproject.toml's validation (``check``) are derived from
it; the dataclasses below declare its fields (tests/test_settings_classes.py holds them to
it), and tests/test_extension.py holds the VS Code extension's ``package.json`` to it.
Values combine in one order, ``effective``: the project, then the module's table, then
the editor or the command line (standard library only)."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

DEVICES = re.compile(r"^(cpu|meta|mps|cuda(:(?P<index>\d{1,4}))?)$")
MAX_DEVICE = 1023  # cuda:N: no machine has more devices; a longer index is a typo (and overflows torch's int)
IRS = ("training", "core-aten")
TARGETS = ("aoti", "onnx", "executorch")  # where a program is lowered after it exports (docs/targets.md)
MAX_TIMEOUT = 7 * 24 * 3600.0  # seconds: a week; longer is a typo, and past ~1e9 the clock overflows
MIN_MEMORY = 256 << 20  # bytes: below this the export's process cannot even import torch
MAX_MEMORY = 16 << 40  # bytes: more than any one machine holds; past ~8 EiB the cap overflows the kernel's limit

PROJECT = (
    "project"  # pyproject.toml's [tool.exportlens] and each module's table; elsewhere None means "the project decides"
)
CLI = "cli"  # an option of the commands that export
SERVER = "server"  # read by the language server from its client (camelCase key)
EDITOR = "editor"  # contributed by the VS Code extension (package.json)


@dataclass(frozen=True)
class Setting:
    """One setting. ``accept`` gives the value as used, or None (or ValueError) for a bad one;
    without it, ``kind``, ``choices`` and the range decide."""

    name: str  # pyproject.toml's key and the Python field
    kind: type  # bool, int, float or str
    default: Any  # the project's default for PROJECT settings, else the server's and the editor's
    help: str  # one sentence (markdown backticks allowed): --help and the editor's description
    where: frozenset[str]
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    above: bool = False  # minimum itself is refused
    maximum: float | None = None
    pattern: str | None = None  # the editor's JSON schema for a string
    expected: str = ""  # what a good value is, as a refusal says it; derived when empty
    accept: Callable[[Any], Any] | None = None
    key: str = ""  # the editor's name, when not the camelCase of name
    flags: tuple[str, ...] = ()  # the CLI's other spellings
    commands: tuple[str, ...] = ()  # the CLI commands that take it; empty: every one that exports
    cli_default: Any = None  # where the project does not decide
    scope: str = "window"  # the editor's: "resource" may differ per workspace folder (the server asks each folder)

    @property
    def editor_key(self) -> str:
        head, *rest = self.name.split("_")
        return self.key or head + "".join(p.title() for p in rest)

    @property
    def refusal(self) -> str:
        if self.expected:
            return self.expected
        if self.choices:
            return f"one of {', '.join(self.choices)}"
        if self.kind is bool:
            return "true or false"
        if self.kind is int:
            return f"a whole number ≥ {self.minimum:g}"
        return "a non-empty string"


def _device(value: Any) -> Any:
    m = DEVICES.match(value) if isinstance(value, str) else None
    return value if m and int(m["index"] or 0) <= MAX_DEVICE else None


def _memory(value: Any) -> Any:
    return str(value) if MIN_MEMORY <= (parse_bytes(value) or 0) <= MAX_MEMORY else None


def _targets(value: Any) -> Any:
    """A list of deployment targets, each once, in the order written; None for anything else."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v in TARGETS for v in value):
        return None
    return tuple(dict.fromkeys(value))


def interpreter(value: Any) -> str:
    """The Python that runs exports: an executable file, or a command on PATH, as a path;
    ValueError saying what is wrong. Checked where it is set, so a typo is a refusal then,
    not a dead worker later."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a path to a Python interpreter")
    found = (
        shutil.which(value)
        if os.sep not in value
        else (value if os.path.isfile(value) and os.access(value, os.X_OK) else None)
    )
    if found is None:
        raise ValueError(
            "an interpreter: " + ("no such file" if not os.path.exists(value) else "not an executable file")
        )
    return found


_EXPORTS = frozenset({PROJECT, CLI, SERVER, EDITOR})
_PROJECT_SAYS = "`null`: the project's `[tool.exportlens]` decides"

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "export_on", str, "save", "When modules are exported.", frozenset({SERVER, EDITOR}),
        choices=("save", "change", "manual"),
    ),
    Setting(
        "debounce_ms", int, 300, "Milliseconds to wait after the last save or edit before exporting.",
        frozenset({SERVER, EDITOR}), minimum=0, key="debounce",
    ),
    Setting(
        "device", str, "cpu",
        "The device example inputs and modules are built on: `cpu`, `cuda`, `cuda:N`, `mps` or `meta`.",
        _EXPORTS, pattern="^(cpu|cuda|cuda:[0-9]+|mps|meta)$", accept=_device, scope="resource",
        expected=f"one of cpu, cuda, cuda:N, mps, meta (N at most {MAX_DEVICE})",
    ),
    Setting("strict", bool, False, "torch.export's strict (TorchDynamo) mode.", _EXPORTS, scope="resource"),
    Setting(
        "ir", str, "training", "The exported program's IR: `training`, or `core-aten` (`run_decompositions`).",
        _EXPORTS, choices=IRS, scope="resource",
    ),
    Setting(
        "timeout", float, 60.0, "Seconds an export may run, from its own process's start; past it, EL501.",
        _EXPORTS, minimum=0, above=True, maximum=MAX_TIMEOUT, scope="resource",
        expected=f"a number of seconds above 0 and at most {MAX_TIMEOUT:.0f} (a week)",
    ),
    Setting(
        "memory_limit", str, "8GiB", "Memory an export's processes may add, like `8GiB`; past it, EL503.",
        _EXPORTS, pattern=r"^\s*[0-9]+(\.[0-9]+)?\s*([KMGTkmgt]i?[Bb]?|[Bb])?\s*$", accept=_memory, scope="resource",
        expected="a size like 8GiB, at least 256MiB and at most 16TiB",
    ),
    Setting(
        "targets", tuple, (), "Where each exported program is lowered and checked against eager:"
        " `aoti`, `onnx`, `executorch`.",
        frozenset({PROJECT}), accept=_targets, expected=f"a list of {', '.join(TARGETS)}",
    ),
    Setting(
        "sandbox", bool, True,
        "Confine each export with Linux Landlock and seccomp: it reads the project, the interpreter and system folders,"
        " writes only its scratch and artifact folders, changes no file's mode, owner or times,"
        " and reaches no other process.",
        _EXPORTS, scope="resource",
    ),
    Setting(
        "artifact_folder", str, ".exportlens/artifacts",
        "Where “Export” writes `.pt2` files, relative to the project root (the folder holding `pyproject.toml`).",
        frozenset({SERVER, EDITOR}), scope="resource",
    ),
    Setting(
        "inlay_hints", bool, True,
        "Show each assignment's symbolic shape at the end of its line in `forward` of a module that exported.",
        frozenset({SERVER, EDITOR}),
    ),
    Setting(
        "guard_hints", bool, True,
        "Mark each line that constrains a dynamic dim with what it requires (`guard: seq ≤ 64`), as an inlay hint at"
        " its end; hover the line for every guard it added to the exported program.",
        frozenset({SERVER, EDITOR}),
    ),
    Setting(
        "lower_on_save", bool, True,
        "Lower each module for its spec's `targets` after it exports; off: only the “Compile for …” lens does.",
        frozenset({SERVER, EDITOR}),
    ),
    Setting(
        "jobs", int, 2, "Exports that run at a time, each in its own process.", frozenset({CLI, SERVER, EDITOR}),
        minimum=1, flags=("-j",), commands=("check",), cli_default=os.cpu_count() or 1,
    ),
    Setting(
        "python", str, sys.executable, "The interpreter that imports your code and torch.", frozenset({CLI, SERVER}),
        accept=interpreter, cli_default=sys.executable,
    ),
    Setting(
        "log_level", str, "info", "The least severe message the server writes to the output.",
        frozenset({SERVER, EDITOR}), choices=("error", "warning", "info"),
    ),
    Setting(
        "interpreter", str, "",
        "The Python that runs the exportlens server and your exports (it needs `exportlens` and `torch`)."
        " Empty: the environment selected in the Python extension, else the workspace folder's `.venv`,"
        " else `python3` on PATH.",
        frozenset({EDITOR}), scope="machine-overridable",
    ),
    Setting(
        "trace_server", str, "off",
        "Traces the messages between VS Code and the exportlens server, in the “exportlens trace” output.",
        frozenset({EDITOR}), choices=("off", "messages", "verbose"), key="trace.server",
    ),
)  # fmt: skip

BY_NAME = {s.name: s for s in SETTINGS}
NAMES = tuple(s.name for s in SETTINGS if PROJECT in s.where)  # what pyproject.toml may set


def _default(name: str) -> Any:
    return BY_NAME[name].default


# Declared, not built, so a reader and a type checker see each field; tests/test_settings_classes.py
# holds their names and types to SETTINGS, which stays the one place a default is written.
@dataclass(frozen=True)
class Settings:
    """What an export uses, every value set."""

    device: str = _default("device")
    strict: bool = _default("strict")
    ir: str = _default("ir")
    timeout: float = _default("timeout")
    memory_limit: str = _default("memory_limit")
    targets: tuple[str, ...] = _default("targets")
    sandbox: bool = _default("sandbox")


@dataclass(frozen=True)
class Overrides:
    """What the editor or the command line sets over the project; None: the project decides."""

    device: str | None = None
    strict: bool | None = None
    ir: str | None = None
    timeout: float | None = None
    memory_limit: str | None = None
    targets: tuple[str, ...] | None = None
    sandbox: bool | None = None


def editor_schema(s: Setting) -> dict[str, Any]:
    """``s`` as the VS Code extension's package.json contributes it, but for its prose: a
    setting the project decides is null there until the user sets it."""
    kind = {bool: "boolean", int: "integer", float: "number", str: "string"}[s.kind]
    nullable = PROJECT in s.where
    out: dict[str, Any] = {"type": [kind, "null"] if nullable else kind, "default": None if nullable else s.default}
    if s.choices:
        out["enum"] = [*s.choices, None] if nullable else list(s.choices)
    if s.minimum is not None:
        out["exclusiveMinimum" if s.above else "minimum"] = s.minimum
    if s.maximum is not None:
        out["maximum"] = s.maximum
    if s.pattern:
        out["pattern"] = s.pattern
    if s.scope != "window":
        out["scope"] = s.scope
    return out


def effective(settings: Settings, overrides: Overrides) -> Settings:
    return replace(settings, **{f.name: v for f in fields(overrides) if (v := getattr(overrides, f.name)) is not None})


def setting_value(name: str, value: Any) -> Any:
    """``value`` for setting ``name`` as it is used, or ValueError whose message is what is
    expected ("one of training, core-aten"), for each caller to put in its own sentence.
    Never reads a value as something else (``"no"`` is no boolean)."""
    s = BY_NAME[name]
    used = s.accept(value) if s.accept else _plain(s, value)
    if used is None:
        raise ValueError(s.refusal)
    return used


def _plain(s: Setting, value: Any) -> Any:
    """By kind, choices and range; None for a bad value (NaN fails every comparison)."""
    if s.choices:
        return value if isinstance(value, str) and value in s.choices else None
    if s.kind is bool or isinstance(value, bool):
        return value if s.kind is bool and isinstance(value, bool) else None
    if s.kind in (int, float):
        if not isinstance(value, int if s.kind is int else (int, float)):
            return None
        low = s.minimum is None or (value > s.minimum if s.above else value >= s.minimum)
        return s.kind(value) if low and (s.maximum is None or value <= s.maximum) else None
    return value if isinstance(value, str) and value.strip() else None


def jobs(value: Any) -> int:
    """Exports at a time: a whole number ≥ 1; ValueError otherwise."""
    return setting_value("jobs", value)


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
