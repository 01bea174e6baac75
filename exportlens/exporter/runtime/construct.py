"""Build the module as its spec says (torch side): its class called with ``init``, or its
``factory``, with the objects ``init`` declares (``{ call = ..., kwargs = ... }``) built
first. Each failure is a finding on the line that caused it: the user's code where it
raised there, else the spec's own entry in pyproject.toml."""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from typing import Any

import torch

from ..core import codes
from ..core.report import Finding
from ..core.sources import Sources
from ..core.targets import Location, ModuleClass
from ..find.packages import dotted_names, name_base
from ..spec.loading import ExportSpec
from ..spec.values import Call, Ref
from .locate import deepest_in_traceback
from .reading.causes import cause_of


class Stop(Exception):
    """A stage failed; its finding is already recorded."""

    def __init__(self, finding: Finding) -> None:
        self.finding = finding


def construct(cls: type | None, module: ModuleClass, spec: ExportSpec, device: str, files: Sources) -> torch.nn.Module:
    """The module in eval mode on ``device`` (built under it for ``meta``)."""
    torch.manual_seed(0)  # the same weights in every process, so the same verdict
    maker = _resolve(spec.factory, spec.where("factory"), files, "factory") if spec.factory else cls
    name = f"factory {spec.factory}" if spec.factory else module.name
    if device == "meta":
        with torch.device("meta"):
            model = _call(maker, name, module, spec, files)
    else:
        model = _call(maker, name, module, spec, files)
    if not isinstance(model, torch.nn.Module):
        where = spec.where("factory")
        message = (
            f"factory '{spec.factory}' returned {_a(model)}, not an nn.Module:"
            " a factory must return the module to export"
        )
        raise Stop(codes.finding_at(codes.CONSTRUCT_FAILED, message, where.path, where.span))
    return (model if device == "meta" else model.to(device)).eval()


def _call(maker: Any, name: str, module: ModuleClass, spec: ExportSpec, files: Sources) -> Any:
    kwargs = {k: build(v, spec.where(f"init.{k}"), files) for k, v in spec.init.items()}
    try:
        return maker(**kwargs)
    except BaseException as exc:
        fallback = spec.where("factory") if spec.factory else Location(module.path, module.name_span)
        path, line = where_of(exc, files, fallback.path, fallback.line)
        init = ", ".join(f"{k}={v!r}" for k, v in spec.init.items())
        message = f"{name.removeprefix('factory ').rpartition(':')[2]}({init}) failed: {one_line(exc)}"
        raise Stop(_failed(codes.CONSTRUCT_FAILED, message, path, line, exc)) from None


def build(value: Any, where: Location, files: Sources) -> Any:
    """A constructor argument with its declared objects built, innermost first."""
    if isinstance(value, list):
        return [build(v, where, files) for v in value]
    if isinstance(value, dict):
        return {k: build(v, where, files) for k, v in value.items()}
    if not isinstance(value, Call):
        return value
    maker = _resolve(value.call, where, files, "call")
    kwargs = {k: build(v, where, files) for k, v in value.kwargs.items()}
    try:
        return maker(**kwargs)
    except BaseException as exc:
        path, line = where_of(exc, files, where.path, where.line)
        message = f"{value!r} (call = '{value.call}') failed: {one_line(exc)}"
        raise Stop(_failed(codes.CONSTRUCT_FAILED, message, path, line, exc)) from None


def _resolve(ref: Ref, where: Location, files: Sources, what: str) -> Any:
    """What ``ref`` names, imported: a project file as a module of its package."""
    name = importable_name(ref.where, files.root) if ref.in_project else ref.where

    def stop(why: str) -> Stop:
        message = f"{what} '{ref}' does not exist: {why}"
        return Stop(codes.finding_at(codes.CONSTRUCT_FAILED, message, where.path, where.span))

    if ref.in_project and not (Path(files.root) / ref.where).is_file():
        raise stop(f"there is no file {ref.where} in the project")
    try:
        found: Any = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise stop(f"no module named '{exc.name}' can be imported") from None
        raise _import_failed(exc, name, where, files) from None
    except BaseException as exc:
        raise _import_failed(exc, name, where, files) from None
    for i, part in enumerate(ref.qualname.split(".")):
        if not hasattr(found, part):
            owner = ".".join([ref.where if ref.in_project else name, *ref.qualname.split(".")[:i]])
            raise stop(f"{owner} has no '{part}'")
        found = getattr(found, part)
    if not callable(found):
        raise stop(f"it is {_a(found)}, which cannot be called")
    return found


def _import_failed(exc: BaseException, name: str, where: Location, files: Sources) -> Stop:
    path, line = where_of(exc, files, where.path, where.line)
    return Stop(_failed(codes.IMPORT_FAILED, f"importing {name} failed: {one_line(exc)}", path, line, exc))


def _failed(code: codes.Code, message: str, path: str, line: int, exc: BaseException) -> Finding:
    """The finding of a stage that raised ``exc``: its trace for "show more", and what it was (``cause_of``)."""
    return codes.finding(code, message, path, line, detail=trace_of(exc), cause=cause_of(exc))


def _a(value: Any) -> str:
    kind = type(value).__name__
    return "None" if value is None else f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def importable_name(path: str, root: Path | str) -> str:
    """``models/net.py`` -> ``models.net``: the dotted name its package chain gives it, so that
    relative imports work. Puts the folder that name counts from on ``sys.path`` where it is
    not the root (a package with no pyproject.toml, opened below its top: ``transformers/models/bert``)."""
    file = Path(root) / path
    base = name_base(file, Path(root))
    if base != Path(root) and str(base) not in sys.path:
        sys.path.insert(1, str(base))  # after the root: the project's own files come first
    return dotted_names(base, file)[0]


def where_of(exc: BaseException, files: Sources, fallback_path: str, fallback_line: int) -> tuple[str, int]:
    """The project line ``exc`` was raised from (deepest project frame), else the fallback."""
    if isinstance(exc, SyntaxError) and exc.filename and files.owns(exc.filename):
        return files.rel(exc.filename), exc.lineno or 1
    frame = deepest_in_traceback(files, exc.__traceback__)
    if frame is not None:
        return files.rel(frame.filename), frame.line
    return fallback_path, fallback_line


def one_line(exc: BaseException) -> str:
    """The first line of what ``exc`` says, and of the error it was raised from (``raise ...
    from e``): a library that wraps an import's failure often names the real one only there
    (transformers: "Could not import module 'BertModel'", from the import that failed)."""
    said = _first_line(exc)
    cause, seen = exc.__cause__, {id(exc)}
    while cause is not None and cause.__cause__ is not None and id(cause) not in seen:
        seen.add(id(cause))
        cause = cause.__cause__
    return f"{said} (from {_first_line(cause)})" if cause is not None else said


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def trace_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))[-4000:]
