"""Compile the program for each target and run what that gives on eager's inputs (torch side):
the lowering process's work, on what the job's process handed over (handoff.py), and nothing of
the user's imported. Where the job is not confined it runs in the job's own process."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ..compat.lowering import chain, no_translation, not_in_core_aten
from ..violations import first_line
from .agree import run_probe
from .aoti import compile_aoti
from .executorch import compile_executorch
from .handoff import Answer, Failure, Probe, Request
from .onnx import compile_onnx
from .where import places

COMPILE = {"aoti": compile_aoti, "onnx": compile_onnx, "executorch": compile_executorch}


def lower_all(ep: Any, probes: list[Probe], request: Request, folder: Path) -> tuple[Answer, ...]:
    return tuple(_lower(target, ep, probes, request.run, folder) for target in request.targets)


def _lower(target: str, ep: Any, probes: list[Probe], run: bool, folder: Path) -> Answer:
    where = Path(tempfile.mkdtemp(prefix=f"lowered-{target}-", dir=folder))
    started = time.perf_counter()
    try:
        artifact = COMPILE[target](ep, where)
    except Exception as exc:
        return Answer(target, seconds=time.perf_counter() - started, failure=failure_of(exc, ep))
    seconds = time.perf_counter() - started
    ran = tuple(run_probe(artifact, probe) for probe in probes) if run else ()
    return Answer(target, artifact.name, seconds, artifact.size, ran=ran)


def failure_of(exc: BaseException, ep: Any = None) -> Failure:
    innermost = list(chain(exc))[-1]  # what the target itself said, under its wrappers' "see above"
    text = f"{type(innermost).__name__}: {first_line(str(innermost))[:300]}"
    return Failure(text, no_translation(exc), not_in_core_aten(exc), places(exc, ep) if ep is not None else ())


def unloaded(exc: BaseException, request: Request) -> tuple[Answer, ...]:
    """Each target's answer where the program did not load here: the operations it calls that
    this process's torch does not have (those the user's code registers)."""
    failure = failure_of(exc)
    unknown = tuple(op for op in request.ops if not _resolves(op))
    return tuple(Answer(t, failure=Failure(failure.text, unknown_ops=unknown)) for t in request.targets)


def _resolves(op: str) -> bool:
    """``mylib::twice.default`` is an operation registered in this process."""
    import torch

    namespace, _, rest = op.partition("::")
    name, _, overload = rest.partition(".")
    try:
        return hasattr(getattr(getattr(torch.ops, namespace), name), overload or "default")
    except (AttributeError, RuntimeError):
        return False
