"""ONNX: ``torch.onnx.export(..., dynamo=True)`` on the exported program, run with onnxruntime (torch side)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import torch

from .artifact import Artifact


def compile_onnx(ep: Any, folder: Path) -> Artifact:
    path = folder / "model.onnx"
    # the exporter prints its progress and warnings: what matters of it reaches the user as findings
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        program = torch.onnx.export(ep, (), dynamo=True, verbose=False, optimize=True)
    program.save(str(path))
    size = sum(p.stat().st_size for p in folder.iterdir())  # weights may lie beside the model, in files of their own
    return Artifact(program, size, "the ONNX model (onnxruntime)")
