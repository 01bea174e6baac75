"""The command line's options for settings, derived from ``core.settings.SETTINGS``: a
value is checked as pyproject.toml and the editor's are, and a bad one is a usage error
(exit 2) in the same words."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .exporter.core.settings import CLI, PROJECT, SETTINGS, Overrides, Setting, setting_value


def add_settings(parser: argparse.ArgumentParser, command: str) -> None:
    """The options of every setting ``command`` takes."""
    for s in SETTINGS:
        if CLI in s.where and (not s.commands or command in s.commands):
            flags = (f"--{s.name.replace('_', '-')}", *s.flags)
            if s.kind is bool:
                parser.add_argument(*flags, action=argparse.BooleanOptionalAction, default=None, help=_help(s))
            else:
                default = None if PROJECT in s.where else s.cli_default
                parser.add_argument(*flags, type=validated(s.name, s.kind), default=default, help=_help(s))


def _help(s: Setting) -> str:
    said = s.help.replace("`", "").replace("%", "%%")
    if PROJECT in s.where:
        shown = str(s.default).lower() if s.kind is bool else f"{s.default:g}" if s.kind is float else s.default
        return f"{said} (default: the spec's {s.name}, else {shown})"
    return f"{said} (default: {s.cli_default})"


def validated(
    name: str, convert: Callable[[str], object] = str, check_value: Callable[..., object] | None = None
) -> Callable[[str], object]:
    """An argparse type that checks the text as ``check_value`` (else the setting ``name``) does."""

    def parse(text: str) -> object:
        try:
            value = convert(text)
        except ValueError:
            value = text  # the check says what is expected
        try:
            return check_value(value) if check_value else setting_value(name, value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"{text!r} is not {e}") from None

    parse.__name__ = name  # argparse names the type in its message
    return parse


def overrides(args: argparse.Namespace) -> Overrides:
    """The command line's settings over the project's; None: the project decides."""
    return Overrides(**{s.name: getattr(args, s.name) for s in SETTINGS if PROJECT in s.where and CLI in s.where})
