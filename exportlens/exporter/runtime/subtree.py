"""``exportlens tree``: export every submodule of a model on the inputs it is called with,
and say which fail (torch side).

Each distinct submodule is exported once: a node of the same class, weights' shapes,
settings and inputs as one exported before shares its verdict (a 32-layer model exports
one layer, not 32). A failure is explained as ``check`` explains one (explain.py): its
first finding, on the user's line, in the user's names; without fixes, which would edit
the model's spec, not the submodule's.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from ..core import codes
from ..core.options import Options
from ..core.report import Finding
from ..core.settings import effective
from ..core.sources import Sources
from ..core.targets import ModuleClass, Span
from ..core.tree import SubmoduleTree, TreeNode, Verdict
from ..spec.loading import ExportSpec
from ..spec.plan import Plan, Planned, no_spec_findings
from ..spec.shapes import DTYPES
from ..spec.variants import named
from .compat.internals import pytree
from .construct import Stop
from .context import Context
from .inputs import Built
from .locate import deepest_in_traceback, record_guards
from .naming.explain import explain
from .proving.serving import failure_of
from .reading.failures import Raised, read_failure
from .run import in_source_order, prepare, quiet
from .submodules import Call, carried, recorded_calls, sub_built

SHORT = {getattr(torch, long): short for short, long in reversed(DTYPES.items())}  # torch.bool -> "bool"


def tree_of(plan: Plan, planned: Planned, options: Options = Options()) -> SubmoduleTree:
    """``planned``'s tree, as a worker makes it (``in_process.export_planned``'s counterpart)."""
    if planned.spec is None:
        return SubmoduleTree(planned.target, findings=tuple(no_spec_findings(planned)))
    tree = submodule_tree(plan.root, planned.module, planned.spec, options, sources=plan.sources)
    return replace(tree, findings=planned.findings + tree.findings)  # warnings about the spec ride along


def submodule_tree(
    root: Path, module: ModuleClass, spec: ExportSpec, options: Options = Options(), sources: Sources | None = None
) -> SubmoduleTree:
    started = time.perf_counter()
    root = root.resolve()
    files = Sources.of(root, sources)
    settings = effective(spec.settings, options.overrides)
    try:
        _, model, built = prepare(root, module, spec, settings.device, files)
    except Stop as stop:
        return SubmoduleTree(spec.target, findings=named([stop.finding], spec.target))
    with quiet():
        calls, raised = recorded_calls(model, built.args, built.kwargs)
        found = carried(built)
        # the calls both runs made before either stopped are what a dim is read from
        again = recorded_calls(model, *found[1])[0] if found else {}
    dims = found[0] if found and again else None
    ctx = Context(root, module, spec, built, sources=files, model=model)
    nodes = _nodes(model, calls, again, dims, ctx, settings.strict)
    return SubmoduleTree(
        spec.target,
        tuple(replace(n, finding=named([n.finding], spec.target)[0]) if n.finding else n for n in nodes),
        carried=tuple(dims.example) if dims else (),
        stopped=_stopped(raised, files) if raised is not None else "",
        seconds=time.perf_counter() - started,
    )


def _stopped(raised: Exception, files: Sources) -> str:
    """Where the eager run stopped, and why: the submodules after it were never called."""
    frame = deepest_in_traceback(files, raised.__traceback__)
    where = f" at {files.rel(frame.filename)}:{frame.line}" if frame else ""
    said = str(raised).strip().splitlines()
    return f"forward raised {type(raised).__name__}{where}{': ' + said[0][:300] if said else ''}"


def _nodes(
    model: torch.nn.Module, calls: dict[str, Call], again: dict[str, Call], dims: Any, ctx: Context, strict: bool
) -> list[TreeNode]:
    """A node per submodule, the model first (on its own inputs and spec)."""
    nodes: list[TreeNode] = []
    first: dict[tuple[Any, ...], TreeNode] = {}  # signature -> the node exported with it
    for path, sub in model.named_modules():
        cls = type(sub).__qualname__
        if type(sub).forward is torch.nn.Module.forward:
            continue  # a container (ModuleList, ModuleDict): never called, its members are
        if path and path not in calls:
            nodes.append(TreeNode(path, cls, Verdict.NOT_CALLED))
            continue
        target, built = (model, ctx.built) if not path else sub_built(sub, calls[path], again.get(path), dims)
        inputs = described(built)
        key = _signature(sub, inputs, built)
        if key in first:
            seen = first[key]
            nodes.append(replace(seen, path=path, same_as=seen.same_as or seen.path or "(the module)", seconds=0.0))
            continue
        began = time.perf_counter()
        here = ctx if not path else replace(ctx, module=_class_of(type(sub), ctx), built=built, model=sub, dropped=[])
        finding = exported(target, here, strict)
        verdict = Verdict.EXPORTED if finding is None else Verdict.FAILS
        node = TreeNode(path, cls, verdict, finding, inputs, seconds=time.perf_counter() - began)
        first[key] = node
        nodes.append(node)
    return nodes


def exported(module: torch.nn.Module, ctx: Context, strict: bool) -> Finding | None:
    """None where ``module`` exports on ``ctx.built``; else its first finding."""
    built = ctx.built
    with quiet(), record_guards(ctx.sources) as log:
        try:
            torch.export.export(module, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=strict)
            return None
        except Exception as exc:
            failure = exc
    try:
        records = read_failure(failure, log, built)
        if any(isinstance(r, Raised) and r.by_forward for r in records):
            with quiet():
                eager = failure_of(module, built)  # raises eagerly too: the code or its inputs, not export
            records = tuple(replace(r, eager=eager) if isinstance(r, Raised) and r.by_forward else r for r in records)
        found = in_source_order(explain(records, ctx), ctx.module.path)[0]
    except Exception as exc:  # exportlens failed at explaining it: say what torch raised, on the class
        message = f"torch.export failed: {type(failure).__name__} (explaining it failed: {type(exc).__name__})"
        found = codes.finding_at(codes.INTERNAL, message, ctx.module.path, ctx.module.name_span)
    return replace(found, fixes=())


def _class_of(cls: type, ctx: Context) -> ModuleClass:
    """The submodule's class where the project writes it (a finding with no line of the
    user's goes on its name); else the model's class."""
    try:
        filename = inspect.getsourcefile(cls)
        lines, line = inspect.getsourcelines(cls)
    except (TypeError, OSError):
        return ctx.module
    if not filename or not ctx.sources.owns(filename):
        return ctx.module
    at = next((i for i, text in enumerate(lines) if text.lstrip().startswith("class ")), 0)
    column = lines[at].find(cls.__name__) + 1 or 1
    name = Span(line + at, column, line + at, column + len(cls.__name__))
    return ModuleClass(ctx.sources.rel(filename), cls.__name__, Span(line), name, (), None)


def described(built: Built) -> str:
    """``(x: f32[batch, seq, 64], mask: bool[batch, seq])``: its tensor inputs, dims named."""
    parts = []
    for path, leaf in zip(built.paths(), pytree.tree_leaves((built.args, built.kwargs))):
        if isinstance(leaf, torch.Tensor):
            axes = built.names.by_input.get(path, {})
            sizes = ", ".join(axes.get(i, str(s)) for i, s in enumerate(leaf.shape))
            parts.append(f"{path}: {SHORT.get(leaf.dtype, str(leaf.dtype))}[{sizes}]")
    return f"({', '.join(parts)})"


def _signature(module: torch.nn.Module, inputs: str, built: Built) -> tuple[Any, ...]:
    """What decides a submodule's verdict: its classes and theirs below it, their plain
    settings, its weights' shapes, its inputs."""
    weights = tuple((n, tuple(t.shape), t.dtype) for n, t in module.state_dict(keep_vars=True).items())
    classes = tuple((n, type(m).__module__, type(m).__qualname__, _settings(m)) for n, m in module.named_modules())
    others = tuple(
        repr(v)[:80] if isinstance(v, (bool, int, float, str)) or v is None else type(v).__qualname__
        for v in pytree.tree_leaves((built.args, built.kwargs))
        if not isinstance(v, torch.Tensor)
    )
    return (classes, weights, inputs, others)


def _settings(module: torch.nn.Module) -> tuple[tuple[str, Any], ...]:
    """A module's flags (``causal = True``, ``mode = "sdpa"``): one can change its code's path.
    Numbers are left out: a layer's index would make each layer of a model its own export,
    and sizes show in its weights' shapes and inputs."""
    plain = (bool, str)
    return tuple(sorted((k, v) for k, v in vars(module).items() if not k.startswith("_") and isinstance(v, plain)))
