"""Objects a spec builds rather than writes: a ``factory`` that returns the module, and
object values inside ``init`` (``{ call = "transformers:BertConfig", kwargs = {...} }``).
Read and checked here (no torch); runtime/construct.py builds them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core import codes
from ..core.report import Finding
from ..core.targets import Location

_IDENT = r"[A-Za-z_]\w*"
_DOTTED = re.compile(rf"{_IDENT}(\.{_IDENT})*")
REF_FORMS = "'package.module:name' (importable) or 'path/to/file.py:name' (in the project)"


@dataclass(frozen=True)
class Ref:
    """``"transformers:BertConfig"`` or ``"models/text.py:build_bert"``: something callable."""

    text: str

    @property
    def where(self) -> str:
        return self.text.rpartition(":")[0]

    @property
    def qualname(self) -> str:
        return self.text.rpartition(":")[2]

    @property
    def in_project(self) -> bool:
        return self.where.endswith(".py")

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Call:
    """An object built for the module: ``call(**kwargs)``, kwargs built first (they nest)."""

    call: Ref
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"{self.call.qualname.rpartition('.')[2]}({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"


def parse_ref(raw: Any, what: str) -> Ref:
    """``raw`` as a Ref; ValueError saying what is wrong otherwise."""
    if not isinstance(raw, str):
        raise ValueError(f"{what} must be a string, {REF_FORMS}")
    where, colon, qualname = raw.rpartition(":")
    path_ok = where.endswith(".py") and not where.startswith("/") and ".." not in where.split("/")
    if not colon or not _DOTTED.fullmatch(qualname) or not (path_ok or _DOTTED.fullmatch(where)):
        raise ValueError(f"{what} '{raw}' must look like {REF_FORMS}")
    return Ref(raw)


def parse_value(raw: Any, what: str) -> Any:
    """A constructor argument as written: tables holding ``call`` become Calls (at any depth,
    lists included); every other value is passed as it is. ValueError on a malformed one."""
    if isinstance(raw, list):
        return [parse_value(v, f"{what}[{i}]") for i, v in enumerate(raw)]
    if not isinstance(raw, dict):
        return raw
    if "call" not in raw:
        return {k: parse_value(v, f"{what}.{k}") for k, v in raw.items()}
    extra = sorted(set(raw) - {"call", "kwargs"})
    if extra:
        raise ValueError(f"{what}: an object value takes only `call` and `kwargs`, not {', '.join(extra)}")
    kwargs = raw.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise ValueError(f"{what}: kwargs must be a table of keyword arguments, like kwargs = {{ hidden_size = 32 }}")
    ref = parse_ref(raw["call"], f"{what}: call")
    return Call(ref, {k: parse_value(v, f"{what}.{k}") for k, v in kwargs.items()})


def refs(value: Any) -> Iterator[Ref]:
    """Every Ref a constructor argument calls, innermost first."""
    if isinstance(value, Call):
        for v in value.kwargs.values():
            yield from refs(v)
        yield value.call
    elif isinstance(value, list):
        for v in value:
            yield from refs(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from refs(v)


def construction(
    init: dict[str, Any],
    factory: Any,
    at: Callable[..., Location],
    locations: dict[str, Location],
    findings: list[Finding],
) -> tuple[dict[str, Any], Ref | None]:
    """``init``'s values with their objects read, and the factory's Ref; each malformed one
    is an error on its own line (kept in ``locations`` as "init.NAME" and "factory")."""
    out: dict[str, Any] = {}
    for name, raw in init.items():
        where = locations[f"init.{name}"] = at("init", name)
        try:
            out[name] = parse_value(raw, f"init.{name}")
        except ValueError as e:
            findings.append(codes.finding_at(codes.SPEC_INVALID, str(e), where.path, where.span))
    if factory is None:
        return out, None
    where = locations["factory"] = at("factory")
    try:
        return out, parse_ref(factory, "factory")
    except ValueError as e:
        findings.append(codes.finding_at(codes.SPEC_INVALID, str(e), where.path, where.span))
        return out, None


def spec_refs(init: dict[str, Any], factory: Ref | None) -> list[Ref]:
    """What a spec calls to build its module: ``init``'s objects, then the factory."""
    return [*refs(init), *([factory] if factory else [])]
