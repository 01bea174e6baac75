"""Settings in two layers: what the client sent (every key optional, camelCase, from
``initializationOptions`` or ``workspace/configuration``) and what the server uses.

A value of the wrong type or out of range is reported and replaced by its default;
it never stops the server. ``None`` for device, strict, ir, timeout and memoryLimit
means "the project's pyproject.toml decides"."""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from ..exporter.core.settings import NAMES, Overrides, check, interpreter, jobs

ExportOn = Literal["save", "change", "manual"]
EXPORT_ON = ("save", "change", "manual")
LogLevel = Literal["error", "warning", "info"]
LOG_LEVELS = ("error", "warning", "info")


@dataclass(frozen=True)
class ServerSettings:
    export_on: ExportOn = "save"
    device: str | None = None
    strict: bool | None = None
    ir: str | None = None
    timeout: float | None = None  # seconds per export
    memory_limit: str | None = None  # "8GiB"
    sandbox: bool | None = None
    artifact_folder: str = ".exportlens/artifacts"  # relative to the project root
    inlay_hints: bool = True
    debounce_ms: int = 300
    jobs: int = 2  # exports at a time
    python: str = sys.executable  # the interpreter that imports the user's code and torch
    log_level: LogLevel = "info"  # the least severe message sent to the client's log

    @property
    def overrides(self) -> Overrides:
        """The editor's export settings over the project's (None: the project decides)."""
        return Overrides(self.device, self.strict, self.ir, self.timeout, self.memory_limit, self.sandbox)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


_KEYS = {_camel(f.name): f.name for f in fields(ServerSettings)} | {"debounce": "debounce_ms"}


def _check(name: str, value: Any) -> Any:
    """The value to use, or raise ValueError saying what is wrong."""
    if name == "export_on":
        if value not in EXPORT_ON:
            raise ValueError(f"must be one of {', '.join(EXPORT_ON)}")
    elif name == "log_level":
        if value not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
    elif name in NAMES:  # the export's own settings: checked as pyproject.toml and the command line are
        if value is not None:
            try:
                return check(name, value)
            except ValueError as e:
                raise ValueError(f"must be {e}") from None
    elif name == "inlay_hints":
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
    elif name == "debounce_ms":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("must be a whole number ≥ 0")
    elif name in ("jobs", "python"):
        try:
            return (jobs if name == "jobs" else interpreter)(value)
        except ValueError as e:
            raise ValueError(f"must be {e}") from None
    elif name == "artifact_folder":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("must be a non-empty string")
    return value


def resolve(raw: Any, base: ServerSettings = ServerSettings()) -> tuple[ServerSettings, list[str]]:
    """``base`` with the client's values applied; problems as sentences for the user."""
    if raw is None:
        return base, []
    if not isinstance(raw, dict):
        return base, [f"exportlens settings must be an object, got {type(raw).__name__}"]
    raw = raw.get("exportlens", raw) if isinstance(raw.get("exportlens"), dict) else raw
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        name = _KEYS.get(key) or (key if key in _KEYS.values() else None)
        if name is None:
            continue  # "trusted" and keys of newer clients
        try:
            changes[name] = _check(name, value)
        except ValueError as e:
            kept = getattr(base, name)
            problems.append(
                f"setting exportlens.{key} = {value!r} {e}; using "
                + ("the project's [tool.exportlens] value" if kept is None else repr(kept))
            )
    return replace(base, **changes), problems


def camel_keys() -> list[str]:
    """The documented names of the settings (`debounce`, not the field's `debounceMs`)."""
    return sorted(k for k in _KEYS if k != "debounceMs")
