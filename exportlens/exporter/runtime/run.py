"""Run one export: load the user's file, build the module and inputs, export, report (torch side).

Loading, constructing, building the inputs and exporting each turn a failure
into findings on the user's line. What follows a successful export (core-ATen
decompositions, saving the .pt2, the summary) is not guarded: an exception
there reaches the caller (a worker reports it as exportlens's own failure).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import tempfile
import time
from dataclasses import replace
from functools import partial
from inspect import Parameter as P
from pathlib import Path
from typing import Any

import torch

from ..core import codes
from ..core.causes import Cause
from ..core.options import Options, Task, lowered_for
from ..core.report import Finding, ModuleReport, Status
from ..core.settings import effective
from ..core.sources import Sources
from ..core.targets import ModuleClass
from ..spec.loading import ExportSpec, SpecSource
from ..spec.variants import named
from .compat.internals import pytree
from .compat.versions import unsupported
from .construct import Stop as _Stop
from .construct import construct, importable_name
from .construct import one_line as _one_line
from .construct import trace_of as _trace
from .construct import where_of as _where
from .context import Context
from .fixing.fixes import fix_all, fixes_of, verified
from .inputs import Built, build_from_code, build_from_spec, forward_parameters
from .locate import GuardLog, record_guards
from .lowering.lower import lower_targets
from .more_problems import more_problems, with_example_branch
from .naming.explain import explain
from .naming.summary import summarize
from .naming.together import as_one
from .proving.constant_inputs import baked_ints
from .proving.probes import compared, on_eager, with_probe_set
from .proving.serving import Rebuild, failure_of, serving_findings
from .proving.value_probes import refused_values
from .quiet import quiet
from .reading.causes import cause_of
from .reading.failures import Raised, Record, read_failure


def export_module(
    root: Path,
    module: ModuleClass,
    spec: ExportSpec,
    options: Options = Options(),
    sources: Sources | None = None,
    task: Task = Task.SERVE,
) -> ModuleReport:
    """``sources``' unsaved buffers stand in for files (the caller imports them from memory: ``overlay``)."""
    report = partial(_report, spec, time.perf_counter())
    root = root.resolve()
    files = Sources.of(root, sources)  # the files as the user sees them, and which are the user's
    settings = effective(spec.settings, options.overrides)
    device = settings.device

    def rebuild_of(cls: UserClass) -> Rebuild:  # the example inputs of another spec (other sizes)
        return lambda other: _build_inputs(cls, module, other, device, files)

    reference = on_eager(task, options, root, lambda: prepare(root, module, spec, device, files), spec, rebuild_of)
    try:
        cls, model, built = prepare(root, module, spec, device, files)
    except _Stop as stop:
        return report(Status.FAILED, [stop.finding])
    ctx = Context(root, module, spec, built, sources=files, model=model)
    try:
        with quiet(), record_guards(files) as log:
            ep = torch.export.export(
                model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=settings.strict
            )
    except Exception as exc:
        findings = _failed(exc, log, model, ctx, settings.strict, options.collect_all, rebuild_of(cls))
        return report(Status.FAILED, findings, dropped=len(ctx.dropped))
    unserved = _unserved(ep, model, ctx, rebuild_of(cls), device, log) if task.serves else []
    if unserved:  # torch's proof covers the graph, not the model: it fails at a declared size
        return report(Status.FAILED, unserved, summarize(ep, ctx, log, None), dropped=len(ctx.dropped))
    probed = compared(ep.module(), reference) if reference is not None else ()
    ep, artifact = _finish(ep, settings.ir, options.artifact)
    lowerings, lowered = lower_targets(ep, model, ctx, lowered_for(task, options), rebuild_of(cls), device)
    exported = report(Status.EXPORTED, baked_ints(cls.forward, ctx) + lowered, summarize(ep, ctx, log, artifact))
    return replace(exported, probes=probed, lowerings=lowerings)


def _report(
    spec: ExportSpec, started: float, status: Status, findings: list[Finding], summary=None, dropped: int = 0
) -> ModuleReport:
    """The module's report: its findings in the user's names, the time since ``started``."""
    seconds = time.perf_counter() - started
    return ModuleReport(
        spec.target,
        status,
        named(findings, spec.target),
        summary,
        spec.describe(),
        seconds,
        torch.__version__,
        fixes_dropped=dropped,
    )


def _unserved(
    ep: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, device: str, log: GuardLog
) -> list[Finding]:
    """What the program cannot serve: the example inputs or a declared bound (serving.py),
    else a probe of values eager takes (value_probes.py)."""
    found = serving_findings(ep, model, ctx, rebuild, device, log)
    if found:
        return found
    refused = refused_values(ep, model, ctx, rebuild, device, log)
    return [refused] if refused is not None else []


def _failed(
    exc: Exception,
    log: GuardLog,
    model: torch.nn.Module,
    ctx: Context,
    strict: bool,
    collect_all: bool,
    rebuild: Rebuild,
) -> list[Finding]:
    """What the export raised, as findings with their fixes; with ``collect_all``, draft export's too."""
    built = ctx.built

    def try_export(shapes: Any) -> Exception | None:
        return _try(model, built, shapes, strict)

    records = with_example_branch(_with_eager(read_failure(exc, log, built), model, built), model, ctx)
    records = as_one(verified(records, ctx, try_export))
    findings = explain(records, ctx)
    every = ctx.fix_or("fix for all", lambda: fix_all(records, ctx), None)
    if every is not None:  # offered on each finding it solves, after the finding's own
        findings = [replace(f, fixes=f.fixes + (every,)) if fixes_of(r) else f for r, f in zip(records, findings)]
    if collect_all:
        findings += more_problems(model, built, ctx, findings)
    return in_source_order(with_probe_set(findings, records, model, ctx, rebuild), ctx.module.path)


def _with_eager(records: tuple[Record, ...], model: torch.nn.Module, built: Built) -> tuple[Record, ...]:
    """Where forward raised while exporting, whether it raises eagerly on the same inputs
    too: then the code or the spec is wrong; else it is something export does not support."""
    if not any(isinstance(r, Raised) and r.by_forward and r.cause is not Cause.OUT_OF_MEMORY for r in records):
        return records  # (a MemoryError would only be met again, with the cap nearer)
    with quiet():
        eager = failure_of(model, built)
    return tuple(replace(r, eager=eager) if isinstance(r, Raised) and r.by_forward else r for r in records)


def in_source_order(findings: list[Finding], module_path: str) -> list[Finding]:
    """One finding per cause (torch can raise the same one for each of its guards), the
    module's own file first, then by line: the first a user reads is the first that breaks."""
    first: dict[tuple[str, str, int, int, str], Finding] = {}
    for f in findings:
        first.setdefault((f.code, f.path, f.line, f.column, f.message), f)
    return sorted(first.values(), key=lambda f: (f.path != module_path, f.path, f.line, f.column))


def _finish(
    ep: torch.export.ExportedProgram, ir: str, artifact: Path | None
) -> tuple[torch.export.ExportedProgram, str | None]:
    """The program in the IR asked for, saved where asked (the saved path, else None)."""
    if ir == "core-aten":
        ep = ep.run_decompositions()
    if artifact is None:
        return ep, None
    artifact.parent.mkdir(parents=True, exist_ok=True)
    # saved beside it, then renamed over it: a link planted at the artifact's name is replaced,
    # never written through (it could lead to ~/.bashrc or another project's file)
    fd, saving = tempfile.mkstemp(prefix=f".{artifact.name}.", dir=artifact.parent)
    os.close(fd)
    try:
        torch.export.save(ep, saving)
        os.replace(saving, artifact)
    finally:
        Path(saving).unlink(missing_ok=True)
    return ep, str(artifact)


def _try(model: torch.nn.Module, built: Built, shapes: Any, strict: bool) -> Exception | None:
    """Export again with other dynamic_shapes: None when that succeeds."""
    try:
        with quiet():
            torch.export.export(model, built.args, built.kwargs, dynamic_shapes=shapes, strict=strict)
    except Exception as exc:
        return exc
    return None


# -- stages -----------------------------------------------------------------


# A worker's job runs in a fresh process, where nothing of the project is imported yet:
# only a module of the same name as the user's packages can be in the way, and sweeping
# all of sys.modules (thousands of entries) would only cost time.
FRESH_PROCESS = False


def _forget_project_modules(root: Path, name: str) -> None:
    """Drop the project's modules from sys.modules, so an export in a reused process
    sees the files as they are now (and not another project's ``net.py``). Only the user's
    files (``Sources.owns``): a virtualenv inside the project is installed packages, and one
    imported again would register its torch operators twice (torchao's, then transformers
    cannot import a model)."""
    owns = Sources(root).owns
    parts = name.split(".")
    keys = [".".join(parts[:i]) for i in range(1, len(parts) + 1)] if FRESH_PROCESS else list(sys.modules)
    for key in keys:
        mod = sys.modules.get(key)
        if mod is None:
            continue
        file = getattr(mod, "__file__", None) or ""
        # the module, its submodules, the user's files, and the packages its dotted name is in (another project's too)
        if key == name or key.startswith(name + ".") or owns(file) or name.startswith(key + "."):
            del sys.modules[key]
    importlib.invalidate_caches()


def prepare(
    root: Path, module: ModuleClass, spec: ExportSpec, device: str, files: Sources
) -> tuple[UserClass, torch.nn.Module, Built]:
    """The class imported fresh, the module built as the spec says, and its example inputs:
    what ``torch.export.export`` is then called with. Raises ``_Stop`` with the finding; first,
    where torch is older than the supported range (its texts would put findings on wrong lines)."""
    if (why := unsupported()) is not None:
        raise _Stop(codes.finding_at(codes.TORCH_UNSUPPORTED, why, module.path, module.name_span))
    cls = _load_class(root, module, files, declared=spec.factory is not None and module.forward is None)
    model = construct(cls, module, spec, device, files)
    cls = cls or type(model)  # a module the factory declares: its forward is the returned module's
    return cls, model, _build_inputs(cls, module, spec, device, files)


# the user's class: whatever its module defines under that name (a factory may build the nn.Module)
UserClass = type[Any]

_ON_PATH: list[str] = []  # the project root this process put on sys.path last


def _load_class(root: Path, module: ModuleClass, files: Sources, declared: bool = False) -> UserClass | None:
    # only this project's root: another's left behind (checks run in one process) would give
    # its regular package ``models`` precedence over this one's namespace package of that name
    for path in (*_ON_PATH, str(root)):
        if path in sys.path:
            sys.path.remove(path)
    _ON_PATH[:] = [str(root)]
    sys.path.insert(0, str(root))
    name = importable_name(module.path, root)
    _forget_project_modules(root, name)
    try:
        mod = importlib.import_module(name)
    except BaseException as exc:
        path, line = _where(exc, files, module.path, 1)
        message = f"importing {name} failed: {_one_line(exc)}"
        raise _Stop(codes.finding(codes.IMPORT_FAILED, message, path, line, detail=_trace(exc), cause=cause_of(exc)))
    cls = getattr(mod, module.name, None)
    if declared and not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        return None  # no class of the project: the factory makes the module
    if not isinstance(cls, type):
        raise _Stop(
            codes.finding(
                codes.IMPORT_FAILED,
                f"{name} has no class {module.name} after import",
                module.path,
                module.name_span.line,
            )
        )
    return cls


def _build_inputs(cls: UserClass, module: ModuleClass, spec: ExportSpec, device: str, files: Sources) -> Built:
    params = _forward_params(cls)
    torch.manual_seed(0)  # the same inputs, so the same verdict, every run
    try:
        if spec.source is SpecSource.CODE:
            assert spec.example_method is not None  # a spec read from code names its method
            built = build_from_code(cls, spec.example_method, list(params))
            if device != "cpu":
                built.args, built.kwargs = _to(built.args, device), _to(built.kwargs, device)
        else:
            built = build_from_spec(spec, forward_parameters(cls), device)
        built.params = list(params)
        built.probe_inputs = getattr(cls, "probe_inputs", None)
        built.name_flat_sources()
    except BaseException as exc:
        loc = spec.location
        path, line = _where(exc, files, loc.path, loc.line)
        message = f"building {_what(spec)} failed: {_one_line(exc)}"
        raise _Stop(codes.finding(codes.INPUTS_FAILED, message, path, line, detail=_trace(exc), cause=cause_of(exc)))
    try:
        inspect.signature(cls.forward).bind(None, *built.args, **built.kwargs)
    except TypeError as exc:
        loc = spec.location
        message = f"{_what(spec)} do not fit forward({', '.join(params)}): {exc}"
        raise _Stop(codes.finding_at(codes.SPEC_SIGNATURE, message, loc.path, loc.span)) from None
    return built


def _what(spec: ExportSpec) -> str:
    return f"{spec.example_method}()" if spec.source is SpecSource.CODE else "the example inputs"


def _forward_params(cls: UserClass) -> dict[str, Any]:
    """forward's parameters as Python sees them (it may be inherited, even from torch)."""
    try:
        sig = inspect.signature(cls.forward)
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.kind for p in list(sig.parameters.values())[1:] if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
    }


def _to(value: Any, device: str) -> Any:
    return pytree.tree_map_only(torch.Tensor, lambda t: t.to(device), value)
