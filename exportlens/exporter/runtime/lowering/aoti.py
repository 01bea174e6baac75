"""AOTInductor: the program compiled to a .pt2 package with the system's C++ compiler (torch side).
Building and loading are apart: where the job is confined, AOTInductor's compiler builds
(compiler.py) and the lowering process, which the seccomp filter confines, loads and runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compat.lowering import aoti_compile, aoti_load
from .artifact import Artifact
from .literals import strings_escaped


def compile_aoti(ep: Any, folder: Path) -> Artifact:
    """Built and loaded in this process: a job that is not confined."""
    return load_aoti(build_aoti(ep, folder), folder)


def build_aoti(ep: Any, folder: Path) -> Path:
    """The package, with the module's text in the generated C++ kept to string literals."""
    path = folder / "model.pt2"
    with strings_escaped(ep):
        aoti_compile(ep, path, folder / "inductor")  # its caches in the job's scratch folder, removed with it
    return path


def load_aoti(path: Path, folder: Path) -> Artifact:
    """The package at ``path`` loaded, with what loading caches in ``folder``."""
    return Artifact(aoti_load(path, folder / "inductor"), path.stat().st_size, "the AOTInductor package")
