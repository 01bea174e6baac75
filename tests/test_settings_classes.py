"""The settings dataclasses are declared for readers and the type checker; SETTINGS stays the
one declaration of names, kinds and defaults, and these hold the two together."""

from __future__ import annotations

import re
import typing
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

import exportlens.exporter.core.settings as settings
from exportlens.exporter.core.settings import CLI, PROJECT, SERVER, SETTINGS, Overrides, Settings
from exportlens.server.settings import ServerSettings

_KINDS = {"str": str, "bool": bool, "int": int, "float": float, "tuple[str, ...]": tuple}


def _rows(cls: type) -> dict[str, tuple[type, bool, object]]:
    """Each field: its kind, whether None is allowed, its default."""
    hints = typing.get_type_hints(cls)
    rows = {}
    for f in fields(cls):
        hint = hints[f.name]
        args = typing.get_args(hint)
        optional = type(None) in args
        base = next(a for a in args if a is not type(None)) if optional else hint
        kind = typing.get_origin(base) or base
        rows[f.name] = (kind, optional, None if f.default is MISSING else f.default)
    return rows


@pytest.mark.parametrize(
    ("cls", "where", "unset"),
    [(Settings, PROJECT, False), (Overrides, PROJECT, True), (ServerSettings, SERVER, None)],
    ids=["Settings", "Overrides", "ServerSettings"],
)
def test_each_settings_class_has_exactly_the_declared_fields_kinds_and_defaults(cls, where, unset):
    expected = {}
    for s in SETTINGS:
        if where not in s.where:
            continue
        # the server leaves what the project decides as None until its client says otherwise
        none = unset if unset is not None else PROJECT in s.where
        expected[s.name] = (s.kind, none, None if none else s.default)
    assert _rows(cls) == expected


def test_the_command_lines_overrides_are_a_subset_of_the_dataclass():
    names = {s.name for s in SETTINGS if PROJECT in s.where and CLI in s.where}
    assert names <= {f.name for f in fields(Overrides)}


def test_the_servers_overrides_carry_only_what_the_editor_set():
    settings = ServerSettings(strict=True, ir="core-aten")
    assert settings.overrides == Overrides(strict=True, ir="core-aten")


def test_the_files_said_to_derive_from_settings_exist():
    """What core/settings.py's docstring sends a reader to (the CLI's options, the server's
    reader, the tests that hold them together) is there to read."""
    repo = Path(__file__).resolve().parents[1]
    named = re.findall(r"[\w/]+\.py\b", settings.__doc__ or "")
    assert named, "the docstring names no file"
    missing = [n for n in named if not (repo / n).is_file() and not list((repo / "exportlens").glob(f"**/{n}"))]
    assert missing == []
