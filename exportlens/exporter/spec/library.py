"""An installed model class read from its package's source (libcst; nothing imported or run).

A factory that returns ``LlamaForCausalLM(LlamaConfig(...))`` builds a class the project
does not hold: its forward's parameters, and its config's defaults, are read from the
installed files, found with ``importlib.util.find_spec`` of the top package only (which
runs none of it), so a server may call this on any workspace.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import libcst as cst

from .reading import find_class, literal, method

# how many mel bins and audio samples a speech model gets where its config does not say
_MEL_BINS, _SAMPLES = 80, 16000


@lru_cache(maxsize=8)
def _package(top: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin).parent if origin and origin.endswith("__init__.py") else None


@lru_cache(maxsize=64)
def class_tree(module: str, name: str) -> tuple[cst.Module, cst.ClassDef] | None:
    """The file of the installed package ``module`` that defines the class ``name``, parsed,
    and the class: a ``transformers`` model is looked up among its ``modeling_*`` and
    ``configuration_*`` files by the ``class Name(`` line."""
    parts = module.split(".")
    root = _package(parts[0])
    if root is None:
        return None
    direct = root.joinpath(*parts[1:])
    files = [direct.with_suffix(".py"), direct / "__init__.py"]
    files += sorted(root.glob("models/*/modeling_*.py")) + sorted(root.glob("models/*/configuration_*.py"))
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if f"class {name}(" in text:
            tree = cst.parse_module(text)
            cls = find_class(tree, name)
            if cls is not None:
                return tree, cls
    return None


def forward_params(module: str, name: str) -> list[str]:
    """The names of the installed class's forward parameters (its own, else a base's of the
    same file), without ``self`` and the ``*args``/``**kwargs`` catch-alls."""
    found = class_tree(module, name)
    while found is not None:
        tree, cls = found
        forward = method(cls, "forward")
        if forward is not None:
            return [p.name.value for p in (*forward.params.params[1:], *forward.params.kwonly_params)]
        bases = [b.value.value for b in cls.bases if isinstance(b.value, cst.Name)]
        base = next((find_class(tree, b) for b in bases if find_class(tree, b) is not None), None)
        found = (tree, base) if base is not None else None
    return []


def config_defaults(module: str, name: str) -> dict[str, Any]:
    """The installed config class's literal defaults (``image_size=224``): its ``__init__``'s,
    or its fields' (transformers 5 configs are written as annotated class attributes)."""
    found = class_tree(module, name)
    if found is None:
        return {}
    body = found[1].body.body if isinstance(found[1].body, cst.IndentedBlock) else ()
    fields = [s for line in body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    out = {
        s.target.value: literal(s.value)
        for s in fields
        if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name) and s.value is not None
    }
    init = method(found[1], "__init__")
    params = [*init.params.params[1:], *init.params.kwonly_params] if init is not None else []
    out.update({p.name.value: literal(p.default) for p in params if p.default is not None})
    return {k: v for k, v in out.items() if v is not None}


def main_input(params: list[str], sizes: dict[str, Any]) -> tuple[str, Any, str] | None:
    """The input a library model is called with, its value and why; the other parameters
    are optional (``attention_mask=None``) and keep their defaults."""
    vocab = sizes.get("vocab_size") if isinstance(sizes.get("vocab_size"), int) else 1000
    channels = sizes.get("num_channels", 3)
    size = sizes.get("image_size", 224)
    size = size[0] if isinstance(size, list) and size else size
    mel = sizes.get("num_mel_bins", _MEL_BINS)
    frames = 2 * sizes["max_source_positions"] if isinstance(sizes.get("max_source_positions"), int) else 3000
    known = {
        "input_ids": ({"shape": "i64[batch, seq]", "low": 0, "high": vocab}, f"token ids below {vocab}"),
        "pixel_values": (f"f32[batch, {channels}, {size}, {size}]", f"{channels}-channel images of {size}x{size}"),
        "input_features": (f"f32[batch, {mel}, {frames}]", f"{mel} mel bins by {frames} frames"),
        "input_values": (f"f32[batch, {_SAMPLES}]", f"a second of audio at {_SAMPLES} Hz"),
    }
    for param in params:
        if param in known:
            value, why = known[param]
            return param, value, f"{why} (the installed forward's `{param}`)"
    return None
