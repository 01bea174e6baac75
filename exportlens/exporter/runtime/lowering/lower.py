"""Lower an exported program for each target its spec names, and check the artifact's
numbers against eager (torch side): the one entry point, run by a second job once the
export's own verdict is in (docs/targets.md)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from ...core import codes
from ...core.lowering import COMPILED, FAILED, UNAVAILABLE, Lowering
from ...core.report import Finding, Severity
from ..context import Context
from ..serving import Rebuild
from ..summary import in_user_names
from .agree import Compared, compare, sizes
from .aoti import compile_aoti
from .artifact import Artifact
from .executorch import compile_executorch
from .onnx import compile_onnx
from .packages import missing
from .said import differs_finding, failure_finding, sizes_finding

COMPILE = {"aoti": compile_aoti, "onnx": compile_onnx, "executorch": compile_executorch}


def lower_targets(
    ep: Any, model: torch.nn.Module, ctx: Context, targets: tuple[str, ...], rebuild: Rebuild, device: str
) -> tuple[tuple[Lowering, ...], list[Finding]]:
    """Each target's Lowering, and the findings of all of them (no targets: an export job's, nothing)."""
    lowerings, findings = [], []
    for target in targets:
        lowering, found = _lower(target, ep, model, ctx, rebuild, device)
        lowerings.append(lowering)
        findings += found
    return tuple(lowerings), findings


def _lower(
    target: str, ep: Any, model: torch.nn.Module, ctx: Context, rebuild: Rebuild, device: str
) -> tuple[Lowering, list[Finding]]:
    lacks = missing(target)
    if lacks:
        where = ctx.spec.where("targets")
        message = f"the `{target}` target cannot be checked: {lacks}"
        return Lowering(target, UNAVAILABLE), [codes.finding_at(codes.TARGET_MISSING, message, where.path, where.span)]
    folder = Path(tempfile.mkdtemp(prefix=f"lowered-{target}-"))  # in the job's scratch folder: removed with it
    started = time.perf_counter()
    try:
        artifact = COMPILE[target](ep, folder)
    except Exception as exc:
        seconds = time.perf_counter() - started
        return Lowering(target, FAILED, seconds), [failure_finding(target, exc, ep, ctx, in_user_names(ep, ctx))]
    seconds = time.perf_counter() - started
    if device == "meta":  # nothing to run it on
        return Lowering(target, COMPILED, seconds, artifact.size), []
    compared = [c for size in sizes(ctx) if (c := compare(artifact, model, ctx, rebuild, size)) is not None]
    findings = _findings(target, artifact, compared, ctx)
    errors = [c.error for c in compared if c.size.inside and c.error is not None]  # outside, eager is no reference
    ran = tuple(str(c.size) for c in compared if c.size.inside and not (c.refused or c.eager_failed))
    failed = any(f.severity is Severity.ERROR for f in findings)
    status = FAILED if failed else COMPILED
    return Lowering(target, status, seconds, artifact.size, max(errors, default=None), ran), findings


def _findings(target: str, artifact: Artifact, compared: list[Compared], ctx: Context) -> list[Finding]:
    """The first size the artifact refuses or answers otherwise inside the range, and the first
    outside it that it accepts where eager fails or answers otherwise."""
    inside = next((c for c in compared if c.size.inside and (c.refused or c.differs)), None)
    outside = next((c for c in compared if not c.size.inside and not c.refused and (c.eager_failed or c.differs)), None)
    out = []
    if inside is not None:
        said = sizes_finding if inside.refused else differs_finding
        out.append(said(target, artifact, inside, ctx))
    if outside is not None:
        out.append(sizes_finding(target, artifact, outside, ctx))
    return out
