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
