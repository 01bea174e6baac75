"""What the scaffold reads from the code (no torch): each guess, and why, as the spec's
comment says it."""

from __future__ import annotations

from pathlib import Path

import tomlkit

from exportlens.exporter.edit.scaffold import candidates, with_tables
from exportlens.exporter.find.children import parents
from exportlens.exporter.spec.plan import make_plan


def guesses(tmp_path: Path, source: str, name: str) -> list[str]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "m.py").write_text(source)
    plan = make_plan([tmp_path], root=tmp_path)
    module = next(p.module for p in plan.modules if p.module.name == name)
    return [tomlkit.dumps(c.table()) for c in candidates(module, source)]


KV = """\
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self, dim: int = 64, max_seq_len: int = 16):
        super().__init__()
        self.wq = nn.Linear(dim, dim)

    def forward(self, x, start_pos: int, scale: float, causal: bool, mask: torch.Tensor | None = None):
        b, t, d = x.shape
        return self.wq(x) * scale
"""


def test_rank_from_shape_unpacking_sizes_from_the_first_layer_and_plain_ints(tmp_path: Path) -> None:
    first, *others = guesses(tmp_path, KV, "Block")
    assert 'inputs = {x = "f32[batch, seq, 64]", start_pos = "int[start_pos]", scale = 0.5, causal = false}' in first
    assert "dims = {batch = {min = 1, max = 64}, seq = {min = 2, max = 16}, start_pos = {min = 0, max = 15}}" in first
    assert "#   x: rank 3 from `b, t, d = x.shape`; last size 64: the input of `self.wq = nn.Linear(dim, dim)`" in first
    assert "mask" not in first.split("inputs")[1]  # an optional argument keeps its default
    assert any("start_pos = 0" in c for c in others) and any("causal = true" in c for c in others)


HF = """\
from torch import nn

class Lm(nn.Module):
    def __init__(self, vocab_size: int = 500, hidden: int = 32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)

    def forward(self, input_ids, attention_mask, position_ids):
        return self.embed(input_ids) * attention_mask[..., None]

class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(num_embeddings=77, embedding_dim=8)
        self.conv = nn.Conv2d(5, 8, 3)

    def forward(self, words, image):
        return self.table(words), self.conv(image)
"""


def test_hugging_face_names_and_embedding_and_conv_layers(tmp_path: Path) -> None:
    (lm,) = guesses(tmp_path, HF, "Lm")
    assert 'input_ids = {shape = "i64[batch, seq]", low = 0, high = 500}' in lm
    assert 'attention_mask = {shape = "i64[batch, seq]", fill = "ones"}' in lm
    assert 'position_ids = {shape = "i64[1, seq]", fill = "arange"}' in lm
    (tokens,) = guesses(tmp_path, HF, "Tokens")
    assert 'words = {shape = "i64[batch, seq]", low = 0, high = 77}' in tokens
    assert 'image = "f32[batch, 5, 32, 32]"' in tokens


def test_a_shape_nothing_tells_is_said_to_be_a_guess_with_another_rank_to_try(tmp_path: Path) -> None:
    source = "from torch import nn\n\nclass Act(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
    first, second = guesses(tmp_path, source, "Act")
    assert 'inputs = {x = "f32[batch, 16]"}' in first and "guessed: nothing in forward tells its shape" in first
    assert 'inputs = {x = "f32[batch, seq, 16]"}' in second


def test_jaxtyping_annotation(tmp_path: Path) -> None:
    source = (
        "from jaxtyping import Float\nfrom torch import Tensor, nn\n\nclass J(nn.Module):\n"
        '    def forward(self, x: Float[Tensor, "batch 3 h"], y):\n        return x\n'
    )
    first = guesses(tmp_path, source, "J")[0]
    assert 'x = "f32[batch, 3, h]"' in first


def test_parts_built_in_a_parents_init_are_covered(tmp_path: Path) -> None:
    source = (
        "from torch import nn\n\nclass Part(nn.Module):\n    def forward(self, x):\n        return x\n\n"
        "class Whole(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.parts = nn.ModuleList([Part() for _ in range(2)])\n\n"
        "    def forward(self, x):\n        return x\n"
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(source)
    plan = make_plan([tmp_path], root=tmp_path)
    assert parents((p.module for p in plan.modules), plan.sources) == {"m.py:Part": "m.py:Whole"}


def test_tables_are_added_and_every_other_byte_kept() -> None:
    before = '[project]\nname = "x"   # mine\n\n[tool.ruff]\nline-length = 99\n'
    table = tomlkit.table()
    table["inputs"] = tomlkit.inline_table()
    table["inputs"]["x"] = "f32[4]"
    after = with_tables(before, {"m.py:M": table})
    assert after == before + '\n[tool.exportlens.modules."m.py:M"]\ninputs = {x = "f32[4]"}\n'
    settled = with_tables(before + '\n[tool.exportlens]\ndevice = "cpu"  # here\n', {"m.py:M": table})
    assert settled.startswith(before + '\n[tool.exportlens]\ndevice = "cpu"  # here\n')


DEFAULTS = """\
from torch import nn

class Lm(nn.Module):
    def __init__(self, vocab_size: int = 100, dim: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)

    def forward(self, idx, targets=None, is_training=False, scale=2.0):
        return self.embed(idx)
"""


def test_parameters_with_defaults_keep_them(tmp_path: Path) -> None:
    first, *_ = guesses(tmp_path, DEFAULTS, "Lm")
    assert 'inputs = {idx = {shape = "i64[batch, seq]", low = 0, high = 100}}' in first
    assert "targets" not in first and "is_training" not in first and "scale" not in first


CONFIG = """\
from dataclasses import dataclass
from typing import Optional

from torch import nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    n_kv_head: Optional[int] = None
    bias: bool = True


class Mlp(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)

    def forward(self, x):
        return self.fc(x)


class Plain(nn.Module):
    def __init__(self, config):  # unannotated, as in nanoGPT: the file's only config dataclass
        super().__init__()
        self.ln = nn.LayerNorm(config.n_embd)

    def forward(self, x):
        return self.ln(x)
"""


def test_a_config_dataclass_is_built_from_its_defaults_with_large_sizes_scaled_down(tmp_path: Path) -> None:
    first, *_ = guesses(tmp_path, CONFIG, "Mlp")
    assert (
        'init = {config = {call = "m.py:GPTConfig", kwargs = {block_size = 128, vocab_size = 1000, n_layer = 2,'
        " n_head = 4, n_embd = 64}}}" in first
    )
    assert (
        "#   init config: GPTConfig() from its defaults, scaled down: block_size 1024 -> 128,"
        " vocab_size 50304 -> 1000, n_layer 12 -> 2, n_head 12 -> 4, n_embd 768 -> 64" in first
    )
    assert 'inputs = {x = "f32[batch, 64]"}' in first  # the first layer's size, read through config.n_embd
    assert "TODO" not in first
    plain, *_ = guesses(tmp_path, CONFIG, "Plain")
    assert 'init = {config = {call = "m.py:GPTConfig"' in plain
    assert 'inputs = {x = "f32[batch, seq, 64]"}' in plain


BLOCKS = """\
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, n_embd: int, n_head: int):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)

    def forward(self, tokens):
        b, t, c = tokens.shape
        return self.qkv(tokens)
"""


def test_shapes_come_from_what_forward_does_not_from_names(tmp_path: Path) -> None:
    norm, *_ = guesses(tmp_path, BLOCKS, "RMSNorm")
    assert "init = {dim = 64, eps = 1e-06}" in norm  # a required size: a small value its name suggests
    assert "#   init dim = 64 (required; a guess from its name)" in norm
    assert 'inputs = {x = "f32[batch, 64]"}' in norm
    assert "#   x: last size 64: the size of `self.weight`" in norm
    attention, *_ = guesses(tmp_path, BLOCKS, "Attention")
    assert "init = {n_embd = 64, n_head = 4}" in attention
    assert 'inputs = {tokens = "f32[batch, seq, 64]"}' in attention  # unpacked to 3 axes: features, not ids


CACHED = """\
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int = 32, n_heads: int = 4, max_batch: int = 2, max_seq: int = 24):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.max_batch, self.max_seq = max_batch, max_seq
        self.wq = nn.Linear(dim, dim)

    def new_cache(self):
        k_cache = torch.zeros(self.max_batch, self.max_seq, self.n_heads, self.head_dim)
        v_cache = torch.zeros((self.max_batch, self.max_seq, self.n_heads, self.head_dim))
        return k_cache, v_cache

    def forward(self, x, k_cache, v_cache):
        b, t, c = x.shape
        return self.wq(x), k_cache, v_cache
"""


def test_a_cache_input_gets_the_shape_it_is_allocated_with(tmp_path: Path) -> None:
    first, *_ = guesses(tmp_path, CACHED, "Attention")
    assert 'inputs = {x = "f32[batch, seq, 32]", k_cache = "f32[2, 24, 4, 8]", v_cache = "f32[2, 24, 4, 8]"}' in first
    assert "#   k_cache: the shape it is allocated with: `k_cache = torch.zeros(self.max_batch, self.max_seq" in first
    assert "dims = {batch = {min = 1, max = 2}, seq = {min = 2, max = 24}}" in first  # bounded by max_batch, max_seq


META_CACHE = """\
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 32
    max_batch_size: int = 4
    max_seq_len: int = 64


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        shape = (args.max_batch_size, args.max_seq_len, 4, args.dim // 4)
        self.register_buffer("cache_k", torch.zeros(shape), persistent=False)

    def forward(self, x, start_pos: int):
        return x


class Transformer(nn.Module):
    def __init__(self, params: ModelArgs):
        super().__init__()
        self.tok_embeddings = nn.Embedding(256, params.dim)
        self.attention = Attention(params)

    def forward(self, tokens, start_pos: int):
        return self.attention(self.tok_embeddings(tokens), start_pos)
"""


def test_new_tokens_at_a_position_get_ranges_that_fit_the_cache_together(tmp_path: Path) -> None:
    """Meta's reference Llama (issue 35): the cache of `max_seq_len` positions, allocated in
    another class from a named shape, bounds `start_pos + seq`, not each alone."""
    first, *_ = guesses(tmp_path, META_CACHE, "Transformer")
    assert "dims = {batch = {min = 1, max = 4}, seq = {min = 2, max = 16}, start_pos = {min = 0, max = 48}}" in first
    assert "#   `seq` up to 16 and `start_pos` up to 48: together they fit the cache of 64 positions" in first
