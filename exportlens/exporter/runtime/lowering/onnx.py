"""ONNX: ``torch.onnx.export(..., dynamo=True)`` on the exported program, run with onnxruntime (torch side)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import torch

from ..compat.lowering import onnx_stacks, ort_said
from .artifact import Artifact, Refused


def compile_onnx(ep: Any, folder: Path) -> Artifact:
    path = folder / "model.onnx"
    # the exporter prints its progress and warnings: what matters of it reaches the user as findings
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        program = torch.onnx.export(ep, (), dynamo=True, verbose=False, optimize=True)
    assert program is not None  # (None only without dynamo=True)
    program.save(str(path))
    size = sum(p.stat().st_size for p in folder.iterdir())  # weights may lie beside the model, in files of their own
    stacks = onnx_stacks(program)

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return program(*args, **kwargs)
        except Exception as exc:
            said = ort_said(str(exc))
            if said is None:
                raise
            raise Refused(said[1], stacks.get(said[0], "")) from None

    return Artifact(run, size, "the ONNX model (onnxruntime)")
