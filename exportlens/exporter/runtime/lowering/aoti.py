"""AOTInductor: the program compiled to a .pt2 package with the system's C++ compiler (torch side)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compat.lowering import aoti_compile, aoti_load
from .artifact import Artifact


def compile_aoti(ep: Any, folder: Path) -> Artifact:
    path = folder / "model.pt2"
    aoti_compile(ep, path, folder / "inductor")  # its caches in the job's scratch folder, removed with it
    return Artifact(aoti_load(path), path.stat().st_size, "the AOTInductor package")
