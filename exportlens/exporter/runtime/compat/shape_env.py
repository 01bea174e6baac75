"""What exportlens reads of a torch ShapeEnv and its sources, without importing torch
(compat: symbols.py works on sympy and torch's text alone)."""

from __future__ import annotations

from typing import Any


def source_name(source: Any) -> str | None:
    """A guard source's text (``L['x'].size()[0]``): a method up to 2.9, a cached property
    from 2.10 (checked 2.9.1, 2.10.0, 2.13.0). None where a source has none: the symbol
    keeps no user name (its findings say the size as torch's text does, renamed by source)."""
    name = getattr(source, "name", None)
    if callable(name):
        try:
            name = name()
        except Exception:
            return None
    return name if isinstance(name, str) else None


def shape_env_hints(env: Any) -> dict[Any, Any]:
    """Each backed symbol's example value: ``backed_var_to_val`` (2.15), ``var_to_val`` before."""
    return dict(getattr(env, "backed_var_to_val", None) or getattr(env, "var_to_val", {}) or {})


def shape_env_replacements(env: Any) -> dict[Any, Any]:
    return dict(getattr(env, "replacements", None) or {})


def shape_env_sources(env: Any) -> dict[Any, list[Any]]:
    return dict(getattr(env, "var_to_sources", None) or {})
