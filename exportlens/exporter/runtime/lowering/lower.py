"""Lower an exported program for each target its spec names, and check the artifact's
numbers against eager (torch side): the one entry point, run by a second job once the
export's own verdict is in (docs/targets.md). Eager runs here, beside the user's module;
compiling and running the artifact happen in the lowering process (process.py) where the
job is confined, which runs no code of the user's and is confined as the job is; only
AOTInductor's C++ compile runs where files' modes may change (compiler.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch

from ...core import codes
from ...core.lowering import COMPILED, FAILED, UNAVAILABLE, Lowering
from ...core.report import Finding, Severity
from ..compat.lowering import program_ops
from ..context import Context
from ..naming.summary import in_user_names
from ..proving.serving import Rebuild
from . import handoff, process
from .agree import Compared, compared, eager_probes
from .compiled import lower_all
from .findings import differs_finding, failure_finding, sizes_finding, unloaded_finding
from .handoff import Answer, Request
from .narrowed import narrowed
from .packages import missing
from .where import failure_of


def lower_targets(
    ep: Any, model: torch.nn.Module, ctx: Context, targets: tuple[str, ...], rebuild: Rebuild, device: str
) -> tuple[tuple[Lowering, ...], list[Finding]]:
    """Each target's Lowering, and the findings of all of them (no targets: an export job's, nothing)."""
    unavailable = {t: lacks for t in targets if (lacks := missing(t))}
    ready = tuple(t for t in targets if t not in unavailable)
    run = device != "meta"  # nothing to run it on
    at, probes, failed = eager_probes(model, ctx, rebuild) if ready and run else ([], [], [])
    request = Request(ready, program_ops(ep), run)
    answers = {a.target: a for a in (_answers(ep, probes, request) if ready else ())}
    lowerings, findings = [], []
    for target in targets:
        if target in unavailable:
            where = ctx.spec.where("targets")
            message = f"the `{target}` target cannot be checked: {unavailable[target]}"
            lowerings.append(Lowering(target, UNAVAILABLE))
            findings.append(codes.finding_at(codes.TARGET_MISSING, message, where.path, where.span))
            continue
        answer = answers[target]
        lowering, found = _lowered(answer, ep, ctx, [compared(*c) for c in zip(at, answer.ran, failed)])
        lowerings.append(lowering)
        findings += found
    return tuple(lowerings), findings


def _answers(ep: Any, probes: list, request: Request) -> tuple[Answer, ...]:
    """Lowered in the lowering process where the job started one (a confined job), else here."""
    started = process.started()
    if started is None:
        return lower_all(ep, probes, request, Path(tempfile.mkdtemp(prefix="lowered-")))
    try:
        handoff.save(started.handoff, ep, probes)
    except Exception as exc:  # a program torch cannot write (a tensor subclass, meta weights)
        failure = failure_of(exc)
        return tuple(Answer(t, failure=failure) for t in request.targets)
    return process.ask(started, request)


def _lowered(answer: Answer, ep: Any, ctx: Context, compared: list[Compared | None]) -> tuple[Lowering, list[Finding]]:
    target, failure = answer.target, answer.failure
    if failure is not None and failure.unknown_ops:
        return Lowering(target, FAILED), [unloaded_finding(target, failure, ctx)]
    if failure is not None:
        return Lowering(target, FAILED, answer.seconds), [failure_finding(target, failure, ctx, in_user_names(ep, ctx))]
    measured = [c for c in compared if c is not None]
    done = [c for c in measured if not c.size.near]  # the sizes next to a bound only narrow a range
    findings = _findings(answer.name, done, ctx, measured)
    errors = [c.error for c in done if c.size.inside and c.error is not None]  # outside, eager is no reference
    ran = tuple(str(c.size) for c in done if c.size.inside and not (c.refused or c.eager_failed))
    status = FAILED if any(f.severity is Severity.ERROR for f in findings) else COMPILED
    return Lowering(target, status, answer.seconds, answer.size, max(errors, default=None), ran), findings


def _findings(name: str, compared: list[Compared], ctx: Context, measured: list[Compared]) -> list[Finding]:
    """The first size inside the range the artifact refuses (with the narrower range it serves,
    where there is one) or answers otherwise at (where it answers otherwise: every such size,
    with the largest error), and the first outside it that it accepts where eager fails or
    answers otherwise."""
    first = next((c for c in compared if c.size.inside and (c.refused or c.differs)), None)
    differs_inside = any(c.size.inside and c.differs for c in compared)  # then differing outside is no news
    wrong = (lambda c: c.eager_failed) if differs_inside else (lambda c: c.eager_failed or c.differs)
    outside = next((c for c in compared if not c.size.inside and not c.refused and wrong(c)), None)
    out = []
    if first is not None and first.refused:
        fix = narrowed(first, measured, ctx)
        out.append(sizes_finding(name, first, ctx, fixes=(fix,) if fix else ()))
    elif first is not None:
        out.append(differs_finding(name, [c for c in compared if c.size.inside and c.differs], ctx))
    if outside is not None:
        out.append(sizes_finding(name, outside, ctx))
    return out
