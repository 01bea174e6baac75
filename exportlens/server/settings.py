"""Settings in two layers: what the client sent (every key optional, camelCase, from
``initializationOptions`` or ``workspace/configuration``) and what the server uses, both
derived from the one declaration, ``core.settings.SETTINGS`` (those that apply to SERVER).

A value of the wrong type or out of range is reported and replaced by its default;
it never stops the server. ``None`` for device, strict, ir, timeout, memory_limit and
sandbox means "the project's pyproject.toml decides"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..exporter.core.settings import BY_NAME, PROJECT, SERVER, SETTINGS, Overrides, setting_value

_READ = {s.name: s for s in SETTINGS if SERVER in s.where}


def _default(name: str) -> Any:
    return BY_NAME[name].default


@dataclass(frozen=True)
class ServerSettings:
    """What the server uses: the client's settings, each checked (tests/test_settings_classes.py
    holds the fields to SETTINGS); None for an export setting: the project decides."""

    export_on: str = _default("export_on")
    debounce_ms: int = _default("debounce_ms")
    device: str | None = None
    strict: bool | None = None
    ir: str | None = None
    timeout: float | None = None
    memory_limit: str | None = None
    sandbox: bool | None = None
    artifact_folder: str = _default("artifact_folder")
    inlay_hints: bool = _default("inlay_hints")
    guard_hints: bool = _default("guard_hints")
    lower_on_save: bool = _default("lower_on_save")
    jobs: int = _default("jobs")
    python: str = _default("python")
    log_level: str = _default("log_level")

    @property
    def overrides(self) -> Overrides:
        """The editor's export settings over the project's (None: the project decides)."""
        return Overrides(**{name: getattr(self, name) for name, s in _READ.items() if PROJECT in s.where})


# the editor's camelCase names, the Python names, and `debounceMs` for `debounce`
_KEYS = {s.editor_key: n for n, s in _READ.items()} | {n: n for n in _READ} | {"debounceMs": "debounce_ms"}


def _validated(name: str, value: Any) -> Any:
    """The value to use, or raise ValueError saying what is wrong."""
    if value is None and PROJECT in _READ[name].where:
        return None  # the project decides
    try:
        return setting_value(name, value)
    except ValueError as e:
        raise ValueError(f"must be {e}") from None


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
        name = _KEYS.get(key)
        if name is None:
            continue  # "trusted" and keys of newer clients
        try:
            changes[name] = _validated(name, value)
        except ValueError as e:
            kept = getattr(base, name)
            problems.append(
                f"setting exportlens.{key} = {value!r} {e}; using "
                + ("the project's [tool.exportlens] value" if kept is None else repr(kept))
            )
    return replace(base, **changes), problems


RESOURCE = tuple(n for n, s in _READ.items() if s.scope == "resource")  # what a workspace folder may set for itself


def of_folder(raw: Any) -> Any:
    """A workspace folder's section, but for what only the window decides."""
    return {k: v for k, v in raw.items() if _KEYS.get(k) in RESOURCE} if isinstance(raw, dict) else raw


def in_folder(window: ServerSettings, folder: ServerSettings) -> ServerSettings:
    """The window's settings with the folder's own."""
    return replace(window, **{n: getattr(folder, n) for n in RESOURCE})


def camel_keys() -> list[str]:
    """The documented names of the settings (`debounce`, not `debounceMs`)."""
    return sorted(s.editor_key for s in _READ.values())
