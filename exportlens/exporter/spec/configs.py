"""A constructor's required arguments, guessed for the scaffold (libcst; no torch).

Real models take a config object (a dataclass of the project whose fields all have
defaults: ``GPTConfig``, ``ModelArgs``; or a Hugging Face ``LlamaConfig``, built small)
or required sizes (``dim: int``). The config is
written as an object value (``{ call = "models/gpt.py:GPTConfig", kwargs = {...} }``,
values.py) built from its own defaults, and a size that would make the export slow
(layers, hidden size, vocabulary, context) is scaled down: the spec's comment says what.
A required scalar gets a small value its name suggests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

# size kinds a config names, each with the most init keeps (larger is scaled down to it)
_KINDS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("layers", re.compile(r"^(n_|num_)?(hidden_)?layers?$|^depth$"), 2),
    ("heads", re.compile(r"^(n_|num_)?(attention_|kv_|key_value_)?heads?$"), 4),
    ("head size", re.compile(r"^head_(dim|size)$"), 16),
    ("vocabulary", re.compile(r"^(vocab(_size)?|n_vocab)$"), 1000),
    (
        "context",
        re.compile(r"^(block_size|max_seq_len|max_seq_length|max_position_embeddings|n_ctx|context_length)$"),
        128,
    ),
    ("batch", re.compile(r"^max_batch(_size)?$"), 4),
    (
        "hidden size",
        re.compile(r"^(n_embd|n_embed|dim|d_model|hidden|hidden_size|hidden_dim|embed_dim|emb_dim|width|n_state)$"),
        64,
    ),
    ("feed-forward size", re.compile(r"^(intermediate_size|ffn_dim|ffn_hidden_size|d_ff|mlp_dim|n_inner)$"), 128),
)
Literal = Callable[[cst.BaseExpression | None], Any]
Read = Callable[[str], str]  # a project file's text by its project-relative path ("" where none)
_CONFIG_NAMES = ("config", "cfg", "args", "params", "model_args", "model_config", "conf")
_EPS = re.compile(r"eps|epsilon")
_CLASSES = re.compile(r"^(num_|n_)?(class|classes|labels|outputs)$|_class(es)?$")  # a classifier's outputs


@dataclass
class Guessed:
    """What init passes for the constructor's required parameters, and what it said about them."""

    init: dict[str, Any] = field(default_factory=dict)
    sizes: dict[str, Any] = field(default_factory=dict)  # "config.n_embd" (and "n_embd") -> its value
    notes: list[str] = field(default_factory=list)  # for the spec's comment


def _kind(name: str) -> tuple[str, int] | None:
    return next(((what, most) for what, pattern, most in _KINDS if pattern.match(name.lower())), None)


def scaled(name: str, value: Any) -> Any:
    """``value`` of the field ``name``, scaled down where it is a large size (a vocabulary
    of -1, set by a tokenizer, gets the most too)."""
    kind = _kind(name)
    if kind is None or not isinstance(value, int) or isinstance(value, bool):
        return value
    most = kind[1]
    return most if value > most or (kind[0] == "vocabulary" and value <= 0) else value


def dataclasses_of(tree: cst.Module) -> dict[str, cst.ClassDef]:
    """The file's own ``@dataclass`` classes, by name."""
    out = {}
    for statement in tree.body:
        if isinstance(statement, cst.ClassDef) and any(_is_dataclass(d.decorator) for d in statement.decorators):
            out[statement.name.value] = statement
    return out


def imported_file(path: str, small: cst.ImportFrom, read: Read) -> str | None:
    """The project file ``from .config import X`` (or ``from models.config import X``) in the
    file at ``path`` names, where the project has it: a module file or a package's __init__."""
    module = cst.Module([]).code_for_node(small.module) if small.module is not None else ""
    dots = len(small.relative)
    if dots:
        folder = path.split("/")[:-1]
        if dots - 1 > len(folder):
            return None
        base = folder[: len(folder) - (dots - 1)]
    else:
        base = []
    parts = [*base, *(module.split(".") if module else [])]
    for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
        if parts and read(candidate.lstrip("/")):
            return candidate.lstrip("/")
    return None


def _configs(tree: cst.Module, path: str, read: Read | None) -> dict[str, tuple[str, cst.ClassDef]]:
    """The dataclasses a parameter may take: the file's own, and those it imports from another
    project file (read as text with libcst: no workspace code runs), by name -> (file, class)."""
    out = {name: (path, cls) for name, cls in dataclasses_of(tree).items()}
    if read is None:
        return out
    for line in tree.body:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                continue
            found = imported_file(path, small, read)
            if found is None:
                continue
            theirs = dataclasses_of(cst.parse_module(read(found)))
            for alias in small.names:
                if alias.evaluated_name in theirs:
                    out[alias.evaluated_alias or alias.evaluated_name] = (found, theirs[alias.evaluated_name])
    return out


def _is_dataclass(node: cst.BaseExpression) -> bool:
    node = node.func if isinstance(node, cst.Call) else node
    name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
    return name == "dataclass"


def _fields(cls: cst.ClassDef, literal: Literal) -> dict[str, Any] | None:
    """Each field's literal default (None: a default that is not a literal, kept as it is);
    None where a field has no default (the config cannot be built from its own)."""
    out: dict[str, Any] = {}
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for line in body:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                if small.value is None:
                    return None
                out[small.target.value] = literal(small.value)
    return out


def _config_class(param: cst.Param, configs: dict[str, Any]) -> str | None:
    """The dataclass ``param`` takes: its annotation's, else (``config``, ``args``) the file's only one."""
    note = param.annotation.annotation if param.annotation else None
    if isinstance(note, cst.SimpleString):
        named = note.evaluated_value
    elif isinstance(note, (cst.Name, cst.Attribute)):
        named = note.attr.value if isinstance(note, cst.Attribute) else note.value
    else:
        named = None
    if named is not None:
        return named if named in configs else None
    return next(iter(configs)) if len(configs) == 1 and param.name.value.lower() in _CONFIG_NAMES else None


def _config(name: str, cls_name: str, cls: cst.ClassDef, path: str, out: Guessed, literal: Literal) -> bool:
    fields = _fields(cls, literal)
    if fields is None:
        return False
    kwargs, said = {}, []
    for field_name, value in fields.items():
        small = scaled(field_name, value)
        if small != value:
            kwargs[field_name] = small
            said.append(f"{field_name} {value} -> {small}")
        if small is not None:
            out.sizes[f"{name}.{field_name}"] = small
            out.sizes.setdefault(field_name, small)
    out.init[name] = {"call": f"{path}:{cls_name}", "kwargs": kwargs}
    scaled_text = f", scaled down: {', '.join(said)}" if said else ""
    out.notes.append(f"init {name}: {cls_name}() from its defaults{scaled_text}")
    return True


# A Hugging Face config (``LlamaConfig``) is built from its own defaults with these sizes, a small
# model: every PretrainedConfig takes them (GPT-2's and Whisper's own names through their
# attribute_map), and one a model does not use stays an unused attribute.
HF_SMALL = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 128,
}


def from_imports(tree: cst.Module) -> dict[str, tuple[cst.ImportFrom, str]]:
    """Each name the file imports with ``from X import`` at its top level: the statement, and
    the name as ``X`` has it (``import A as B`` is read under ``B``)."""
    out = {}
    for line in tree.body:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    out[alias.evaluated_alias or alias.evaluated_name] = (small, alias.evaluated_name)
    return out


def _library_configs(tree: cst.Module) -> dict[str, str]:
    """The config classes the file imports from transformers: name -> ``module:Name``."""
    out = {}
    for name, (small, imported) in from_imports(tree).items():
        module = cst.Module([]).code_for_node(small.module) if small.module is not None else ""
        if not small.relative and module.split(".")[0] == "transformers" and imported.endswith("Config"):
            out[name] = f"{module}:{imported}"
    return out


def _library_config(param: cst.Param, configs: dict[str, str]) -> str | None:
    """The transformers config ``param`` takes: its annotation's (``LlamaConfig``,
    ``transformers.LlamaConfig``), else (``config``) the file's only one."""
    note = param.annotation.annotation if param.annotation else None
    if isinstance(note, cst.SimpleString):
        text = note.evaluated_value
        note = cst.Name(text) if isinstance(text, str) and text.isidentifier() else None
    if isinstance(note, cst.Attribute) and isinstance(note.value, cst.Name) and note.value.value == "transformers":
        return f"transformers:{note.attr.value}" if note.attr.value.endswith("Config") else None
    if isinstance(note, cst.Name):
        return configs.get(note.value)
    only = next(iter(configs.values())) if len(configs) == 1 else None
    return only if note is None and param.name.value.lower() in _CONFIG_NAMES else None


def _hf_config(name: str, ref: str, out: Guessed) -> None:
    out.init[name] = {"call": ref, "kwargs": dict(HF_SMALL)}
    for field_name, value in HF_SMALL.items():
        out.sizes[f"{name}.{field_name}"] = value
        out.sizes.setdefault(field_name, value)
    said = ", ".join(f"{k} {v}" for k, v in HF_SMALL.items())
    out.notes.append(f"init {name}: {ref.rpartition(':')[2]}() from its defaults, a small model: {said}")


def _scalar(param: cst.Param) -> Any:
    """A required int/float/bool's value from its name and annotation; None: no guess."""
    name = param.name.value
    note = param.annotation.annotation if param.annotation else None
    typed = note.value if isinstance(note, cst.Name) else None
    kind = _kind(name)
    if typed == "bool":
        return False
    if typed == "float" or (typed is None and _EPS.search(name)):
        return 1e-5 if _EPS.search(name) else 0.0
    if kind is not None and typed in ("int", None):
        return kind[1]
    if _CLASSES.search(name.lower()) and typed in ("int", None):
        return 10
    return 4 if typed == "int" else None


def guess_required(
    params: list[cst.Param], tree: cst.Module, path: str, literal: Literal, read: Read | None = None
) -> tuple[Guessed, list[str]]:
    """Values for the constructor's ``params`` that have no default, and those still missing;
    ``literal`` reads a field's default (reading.py's, passed in: reading.py imports this);
    ``read``: other project files' texts, for a config imported from one of them."""
    out, missing = Guessed(), []
    configs, library = _configs(tree, path, read), _library_configs(tree)
    for param in params:
        name = param.name.value
        cls_name = _config_class(param, configs)
        if cls_name is not None and _config(name, cls_name, configs[cls_name][1], configs[cls_name][0], out, literal):
            continue
        if (ref := _library_config(param, library)) is not None:
            _hf_config(name, ref, out)
            continue
        value = _scalar(param)
        if value is None:
            missing.append(name)
            continue
        out.init[name] = value
        out.sizes[name] = value
        out.notes.append(f"init {name} = {value} (required; a guess from its name)")
    return out, missing
