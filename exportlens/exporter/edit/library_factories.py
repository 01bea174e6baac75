"""Factories whose module is not a class of their own file (libcst; no torch).

``def get_model(num_class): return PointNet(num_class)`` with ``PointNet`` imported from
another project file gets the guesses of that class; ``def build_model(): return
LlamaForCausalLM(LlamaConfig(...))`` builds an installed class, which the table builds
itself (``factory = "transformers:LlamaForCausalLM"``) from the factory's config made small:
the factory as written would build the full-size model, too large to export in seconds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import libcst as cst

from ..core.targets import ModuleClass
from ..spec.configs import HF_SMALL, Read, from_imports, imported_file
from ..spec.guesses import Option
from ..spec.library import config_defaults, forward_params, main_input
from ..spec.reading import find_class, literal
from .scaffold import FACTORY, Candidate, candidates, dim, factory_arguments, passed, returned_call

_LIBRARIES = ("transformers",)


def _library_class(func: cst.BaseExpression, imports: dict) -> tuple[str, str] | None:
    """``("transformers", "LlamaForCausalLM")`` for a call of an installed library's class."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in _LIBRARIES:
        return func.value.value, func.attr.value
    if isinstance(func, cst.Name) and func.value in imports:
        small, name = imports[func.value]
        module = cst.Module([]).code_for_node(small.module) if small.module is not None else ""
        if not small.relative and module.split(".")[0] in _LIBRARIES:
            return module, name
    return None


def factory_candidates_elsewhere(
    path: str, source: str, classes: dict[str, dict[str, ModuleClass]], read: Read
) -> dict[str, list[Candidate]]:
    """For each ``get_model``/``build_*`` of the file that returns a class of another project
    file or of an installed library, keyed ``path.py:build_x``: its guesses."""
    tree = cst.parse_module(source)
    imports = from_imports(tree)
    out = {}
    for fn in tree.body:
        if not isinstance(fn, cst.FunctionDef):
            continue
        call = returned_call(fn) if FACTORY.match(fn.name.value) else None
        if call is None or (isinstance(call.func, cst.Name) and call.func.value in classes.get(path, {})):
            continue  # a class of the file itself: scaffold.factory_candidates' case
        target = f"{path}:{fn.name.value}"
        library = _library_class(call.func, imports)
        if library is not None:
            made = _library_candidate(fn, call, library, imports)
            out.update({target: [made]} if made is not None else {})
            continue
        name = call.func.value if isinstance(call.func, cst.Name) else None
        small = imports.get(name or "")
        found = imported_file(path, small[0], read) if small is not None else None
        returned = classes.get(found or "", {}).get(small[1]) if small is not None else None
        if returned is None or returned.forward is None:
            continue
        init, missing, notes = factory_arguments(fn, tree, path, read)
        theirs = read(returned.path)
        given = passed(call, find_class(cst.parse_module(theirs), returned.name), init)
        said = (f"factory: {fn.name.value}() builds {returned.name} ({returned.path})", *notes)
        out[target] = [
            replace(c, init=init, missing=missing, notes=said, factory=target)
            for c in candidates(returned, theirs, given, read)
        ]
    return out


def _config_call(fn: cst.FunctionDef, call: cst.Call, imports: dict) -> tuple[str, str, dict[str, Any]] | None:
    """The installed config the returned model is built from (``LlamaConfig(use_cache=False)``,
    given inline or through a variable of the factory) and its literal keyword arguments."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value == "config"]
    value = args[0].value if args else None
    if isinstance(value, cst.Name):
        made = {
            s.targets[0].target.value: s.value
            for line in (fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ())
            for s in (line.body if isinstance(line, cst.SimpleStatementLine) else ())
            if isinstance(s, cst.Assign) and isinstance(s.targets[0].target, cst.Name)
        }
        value = made.get(value.value)
    if not isinstance(value, cst.Call):
        return None
    library = _library_class(value.func, imports)
    if library is None:
        return None
    kwargs = {a.keyword.value: literal(a.value) for a in value.args if a.keyword is not None}
    return library[0], library[1], {k: v for k, v in kwargs.items() if v is not None}


def _library_candidate(
    fn: cst.FunctionDef, call: cst.Call, library: tuple[str, str], imports: dict
) -> Candidate | None:
    """The installed model built as the factory builds it, from its config made small, and
    called with the main input its installed forward takes."""
    config = _config_call(fn, call, imports)
    if config is None:
        return None
    module, config_name, written = config
    # the factory's own size where it is smaller already
    kwargs = {**written, **{k: min(v, written.get(k, v)) for k, v in HF_SMALL.items()}}
    defaults = config_defaults(module, config_name)
    if defaults.get("use_cache") is True:  # a cache object in the output torch.export cannot flatten (EL304)
        kwargs["use_cache"] = False
    sizes = {**defaults, **kwargs}
    found = main_input(forward_params(*library), sizes)
    if found is None:
        return None
    name, value, why = found
    shape = value["shape"] if isinstance(value, dict) else value
    dims = {d: dim(d, sizes) for d in ("batch", "seq") if d in shape}
    said = ", ".join(f"{k} {v}" for k, v in HF_SMALL.items())
    notes = (
        f"factory: {fn.name.value}() builds {library[1]}({config_name}(...)); checked as that, a small model: {said}",
    )
    config_value = {"call": f"{module}:{config_name}", "kwargs": kwargs}
    return Candidate({"config": config_value}, (), {name: Option(value, why)}, dims, notes, f"{module}:{library[1]}")
