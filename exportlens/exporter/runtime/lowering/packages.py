"""What each target needs installed beside torch, and what is missing (torch side)."""

from __future__ import annotations

import importlib.util
import os
import shutil

# the import names each target needs; pyproject.toml's extras install them
PACKAGES = {"aoti": (), "onnx": ("onnx", "onnxscript", "onnxruntime"), "executorch": ("executorch",)}
COMPILERS = ("c++", "g++", "clang++")  # AOTInductor builds its kernels with the system's C++ compiler


def missing(target: str) -> str:
    """What the interpreter that runs exports lacks for ``target``, as a sentence's end; "" where nothing."""
    absent = [name for name in PACKAGES[target] if not _found(name)]
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        return f"{', '.join(absent)} {verb} not installed: pip install 'exportlens[{target}]'"
    if target == "aoti" and not (os.environ.get("CXX") or any(shutil.which(c) for c in COMPILERS)):
        return "it needs a C++ compiler, and none is on PATH (g++ or clang++; or set CXX)"
    return ""


def _found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken install, or a finder that refuses it
        return False
