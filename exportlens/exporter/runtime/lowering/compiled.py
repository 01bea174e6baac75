"""Compile the program for each target and run what that gives on eager's inputs (torch side):
the lowering process's work, on what the job's process handed over (handoff.py), and nothing of
the user's imported; AOTInductor's package is built by its compiler (compiler.py) and loaded
here. Where the job is not confined it all runs in the job's own process."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .agree import run_probe
from .aoti import compile_aoti
from .artifact import Artifact
from .compiler import CompileFailed
from .executorch import compile_executorch
from .handoff import Answer, Failure, Probe, Request
from .onnx import compile_onnx
from .where import failure_of

Compile = Callable[[Any, Path], Artifact]
COMPILE: dict[str, Compile] = {"aoti": compile_aoti, "onnx": compile_onnx, "executorch": compile_executorch}


def lower_all(
    ep: Any, probes: list[Probe], request: Request, folder: Path, aoti: Compile = compile_aoti
) -> tuple[Answer, ...]:
    """Each target's answer; ``aoti`` builds and loads AOTInductor's package (in the lowering
    process: asks the compiler, then loads)."""
    compilers = {**COMPILE, "aoti": aoti}
    return tuple(_lower(target, compilers[target], ep, probes, request.run, folder) for target in request.targets)


def _lower(target: str, build: Compile, ep: Any, probes: list[Probe], run: bool, folder: Path) -> Answer:
    where = Path(tempfile.mkdtemp(prefix=f"lowered-{target}-", dir=folder))
    started = time.perf_counter()
    try:
        artifact = build(ep, where)
    except CompileFailed as exc:  # said in the compiler's process, which had the failure's frames
        return Answer(target, seconds=time.perf_counter() - started, failure=exc.failure)
    except Exception as exc:
        return Answer(target, seconds=time.perf_counter() - started, failure=failure_of(exc, ep))
    seconds = time.perf_counter() - started
    ran = tuple(run_probe(artifact, probe) for probe in probes) if run else ()
    return Answer(target, artifact.name, seconds, artifact.size, ran=ran)


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
