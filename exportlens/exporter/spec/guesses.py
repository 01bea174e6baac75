"""Each forward parameter's example value, guessed from the code (no torch).

A guess is a list of options, the likeliest first, each saying why it was chosen (the
spec's comment shows that): the parameter's annotation (``int``, ``float``, ``bool``,
``Optional``, jaxtyping), Hugging Face's names (``input_ids``, ``attention_mask``,
``pixel_values``, ``position_ids``), the rank a ``.shape`` unpacking gives, the size a
``.view`` ends in, and the first layer applied to it (reading.py). Options after the
first are what the scaffold tries where the first does not run (scaffold.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core.targets import Param
from .jaxtyping_spec import DTYPES, jaxtyping_class, shape_literal
from .reading import Layer, Reading, Use

# layers whose input ends in their first argument (features), and the rank assumed without a `.shape` unpacking
_LAST = {
    "Linear": 2,
    "Bilinear": 2,
    "BatchNorm1d": 2,
    "LayerNorm": 3,
    "RMSNorm": 3,
    "MultiheadAttention": 3,
    "LSTM": 3,
    "GRU": 3,
    "RNN": 3,
}
_LAST |= {"TransformerEncoderLayer": 3, "TransformerDecoderLayer": 3}
# layers whose input has their first argument as channels (axis 1), and example spatial sizes
_CHANNELS = {"Conv1d": (64,), "Conv2d": (32, 32), "Conv3d": (8, 16, 16), "BatchNorm2d": (32, 32), "GroupNorm": (32, 32)}
_CHANNELS |= {
    "ConvTranspose1d": (64,),
    "ConvTranspose2d": (32, 32),
    "BatchNorm3d": (8, 16, 16),
    "InstanceNorm2d": (32, 32),
}
_IDS = {"input_ids", "decoder_input_ids", "token_ids", "tokens", "idx", "ids"}
_INTS = {"int": (2, 1), "float": (0.5,), "bool": (False, True)}
_POSITIONS = re.compile(r"pos|offset|start|step")  # an int that says where: 0 first
_IMAGE = ("image_size", "img_size", "input_size", "resolution")
_CHANNEL_NAMES = ("in_chans", "in_channels", "num_channels", "channels")
_VOCAB = ("vocab_size", "num_embeddings", "n_vocab", "vocab")


@dataclass(frozen=True)
class Option:
    value: Any  # a shape string, a tensor table (dict), or a plain int/float/bool
    why: str  # for the spec's comment


def options(param: Param, r: Reading, keep_default: bool = True) -> list[Option] | None:
    """``param``'s example values, likeliest first; None where its default is kept (an
    argument with a default, ``targets=None``, ``is_training=False``, is one the caller may omit)."""
    annotation = (param.annotation or "").replace(" ", "")
    plain = re.sub(r"^Optional\[(.*)\]$|\|None$|^None\|", r"\1", annotation)
    if param.has_default and keep_default:
        return None
    if plain == "int" and _POSITIONS.search(param.name):  # where a sequence starts: a variable, else 0
        dynamic = Option(f"int[{param.name}]", "a position (annotated `int`): an int the program takes as a variable")
        return [dynamic, Option(0, "a plain int (annotated `int`)")]
    if plain in _INTS:
        return [Option(v, f"a plain {plain} (annotated `{plain}`)") for v in _INTS[plain]]
    if jaxtyping_class(param):
        found = _jaxtyped(param)
        if found:
            return [found]
    cached = _cache(param.name, r)
    if cached:
        return [cached]
    named = _hugging_face(param.name, r)
    if named:
        return named
    return _tensor(param.name, r.uses.get(param.name, Use()), r)


def _jaxtyped(param: Param) -> Option | None:
    literal = shape_literal(param.annotation or "")
    cls = jaxtyping_class(param)
    if literal is None or cls not in DTYPES:
        return None
    axes = literal[0].split()
    if not axes or not all(re.fullmatch(r"[A-Za-z_]\w*|\d+", a) for a in axes):
        return None
    return Option(f"{DTYPES[cls]}[{', '.join(axes)}]", f"from its annotation `{param.annotation}`")


def _first(r: Reading, names: tuple[str, ...]) -> int | None:
    return next((r.sizes[n] for n in names if isinstance(r.sizes.get(n), int)), None)


def _cache(name: str, r: Reading) -> Option | None:
    """A cache passed in has the shape the code allocates it with: under the same name
    (``k_cache`` for ``cache_k`` too), else the one shape every cache of the file has."""
    if "cache" not in name.lower() or not r.caches:
        return None
    words = set(name.lower().split("_"))
    found = r.caches.get(name) or next((c for n, c in r.caches.items() if set(n.lower().split("_")) == words), None)
    if found is None and len({shape for shape, _ in r.caches.values()}) == 1:
        found = next(iter(r.caches.values()))
    if found is None:
        return None
    shape, written = found
    return Option(f"f32[{', '.join(map(str, shape))}]", f"the shape it is allocated with: `{_short_text(written, 80)}`")


def _hugging_face(name: str, r: Reading) -> list[Option] | None:
    layer = r.layers.get(r.uses.get(name, Use()).layer or "")
    use = r.uses.get(name, Use())
    floats = (use.axes and len(use.axes) >= 3) or (layer and layer.kind in {**_LAST, **_CHANNELS})
    if name in _IDS and not floats:  # `b, t, c = x.shape` or a Linear first: features, whatever the name
        high = layer.first if layer and layer.kind == "Embedding" and layer.first else _first(r, _VOCAB) or 1000
        return [
            Option({"shape": "i64[batch, seq]", "low": 0, "high": high}, f"token ids below {high} (the name `{name}`)")
        ]
    if name == "attention_mask":
        return [Option({"shape": "i64[batch, seq]", "fill": "ones"}, "a mask of ones (the name `attention_mask`)")]
    if name == "position_ids":
        return [Option({"shape": "i64[1, seq]", "fill": "arange"}, "0, 1, 2, ... (the name `position_ids`)")]
    if name == "pixel_values":
        channels = layer.first if layer and layer.kind in _CHANNELS and layer.first else _first(r, _CHANNEL_NAMES) or 3
        size = _first(r, _IMAGE) or 224
        return [Option(f"f32[batch, {channels}, {size}, {size}]", "an image batch (the name `pixel_values`)")]
    return None


def _tensor(name: str, use: Use, r: Reading) -> list[Option]:
    """A tensor's shapes: rank from ``.shape`` unpacking, sizes from its first layer."""
    layer = r.layers.get(use.layer or "")
    said = f"rank {len(use.axes)} from `{', '.join(use.axes)} = {name}.shape`" if use.axes else ""
    if layer and layer.first and layer.kind == "Embedding":
        rank = len(use.axes) if use.axes else 2
        shape = "i64[" + ", ".join(["batch", "seq", *["4"] * (rank - 2)][:rank]) + "]"
        why = _join(said, f"ids below {layer.first}: the input of `self.{use.layer} = {_short(layer)}`")
        return [Option({"shape": shape, "low": 0, "high": layer.first}, why)]
    if layer and layer.first and layer.kind in _CHANNELS:
        spatial = tuple(str(_first(r, _IMAGE) or s) for s in _CHANNELS[layer.kind])
        return [
            Option(f"f32[batch, {layer.first}, {', '.join(spatial)}]", _join(said, _layer_why(use, layer, "channels")))
        ]
    last, why = _last_size(use, layer, r)
    ranks = [len(use.axes)] if use.axes else [_LAST.get(layer.kind, 2) if layer else 2]
    if not use.axes:
        ranks.append(5 - ranks[0])  # 2 <-> 3: a batch of vectors, or of sequences
    out = []
    for rank in ranks:
        sizes = (
            ["batch", "seq", *["8"] * max(0, rank - 3)][: rank - 1] + [str(last or 16)]
            if rank > 1
            else [str(last or 16)]
        )
        out.append(
            Option(f"f32[{', '.join(sizes)}]", _join(said, why) or "guessed: nothing in forward tells its shape")
        )
    return out


def _last_size(use: Use, layer: Layer | None, r: Reading) -> tuple[int | None, str]:
    if layer and layer.first and layer.kind in _LAST:
        return layer.first, _layer_why(use, layer, "last size")
    if use.last:
        return use.last, f"last size {use.last} from its `.view`/`.reshape`"
    if r.weight and not layer:  # a norm written by hand scales the last axis by its weight
        return r.weight, f"last size {r.weight}: the size of `self.weight`"
    return None, ""


def _layer_why(use: Use, layer: Layer, what: str) -> str:
    return f"{what} {layer.first}: the input of `self.{use.layer} = {_short(layer)}`"


def _short(layer: Layer) -> str:
    return _short_text(layer.written)


def _short_text(written: str, most: int = 48) -> str:
    text = " ".join(written.split())
    return text if len(text) <= most else text[: most - 3] + "...)"


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def dims_of(value: Any) -> list[str]:
    """The named dims a shape (or tensor table) uses."""
    shape = value.get("shape", "") if isinstance(value, dict) else value if isinstance(value, str) else ""
    inside = shape[shape.find("[") + 1 : shape.rfind("]")] if "[" in shape else ""
    return [s.strip() for s in inside.split(",") if re.fullmatch(r"[A-Za-z_]\w*", s.strip())]
