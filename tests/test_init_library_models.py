"""``exportlens init`` on projects shaped as real repositories are: a config dataclass in a
file of its own, a ``get_model`` in a file with no module class, factories that return an
installed transformers model built from its config. The real CLI, real exports (tiny
configs from the installed classes' defaults: nothing is downloaded)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest
from test_init import exportlens

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed"),
]

ARGS = """
from dataclasses import dataclass


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 32
    vocab_size: int = 32000
"""

NET = """
from torch import nn

from .args import ModelArgs


class Net(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.emb = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(nn.Linear(args.dim, args.dim) for _ in range(args.n_layers))

    def forward(self, tokens):
        h = self.emb(tokens)
        for layer in self.layers:
            h = layer(h)
        return h
"""

POINTS = """
from torch import nn


class PointNet(nn.Module):
    def __init__(self, num_class):
        super().__init__()
        self.mlp = nn.Linear(3, 64)
        self.head = nn.Linear(64, num_class)

    def forward(self, xyz):
        b, n, c = xyz.shape
        return self.head(self.mlp(xyz).max(dim=1).values)
"""

FACTORIES = """
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, ViTConfig, ViTForImageClassification

from .points import PointNet


def get_model(num_class):
    return PointNet(num_class)


def build_llama():
    return LlamaForCausalLM(LlamaConfig(rope_theta=10000.0))


def build_vit():
    config = ViTConfig(image_size=32, patch_size=8)
    return ViTForImageClassification(config)


def build_gpt2():
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=1))
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir()
    (root / "models").mkdir()
    (root / "models/__init__.py").write_text("")
    for name, text in files.items():
        (root / "models" / name).write_text(text)
    return root


def table(root: Path, target: str) -> str:
    return (root / "pyproject.toml").read_text().split(f'"{target}"]')[1].split("\n[")[0]


def test_a_config_dataclass_imported_from_another_file_is_built_small(tmp_path: Path) -> None:
    root = _project(tmp_path, {"args.py": ARGS, "net.py": NET})
    done = exportlens(root, "init")
    assert "models/net.py:Net: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    net = table(root, "models/net.py:Net")
    config = '{call = "models/args.py:ModelArgs", kwargs = {dim = 64, n_layers = 2, vocab_size = 1000}}'
    assert f"init = {{args = {config}}}" in net
    assert "#   init args: ModelArgs() from its defaults, scaled down: dim 4096 -> 64" in net
    checked = exportlens(root, "check")
    assert "1 module: 1 exported, 0 failed" in checked.stdout, checked.stdout + checked.stderr


def test_factories_in_a_file_with_no_module_class_and_installed_models(tmp_path: Path) -> None:
    root = _project(tmp_path, {"points.py": POINTS, "factory.py": FACTORIES})
    done = exportlens(root, "init")
    for name in ("get_model", "build_llama", "build_vit", "build_gpt2"):
        assert f"models/factory.py:{name}: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    points = table(root, "models/factory.py:get_model")
    assert 'factory = "models/factory.py:get_model"\ninit = {num_class = 10}' in points
    assert "#   factory: get_model() builds PointNet (models/points.py)" in points
    llama = table(root, "models/factory.py:build_llama")
    assert 'factory = "transformers:LlamaForCausalLM"' in llama
    assert 'init = {config = {call = "transformers:LlamaConfig", kwargs = {rope_theta = 10000.0, ' in llama
    assert 'inputs = {input_ids = {shape = "i64[batch, seq]", low = 0, high = 1000}}' in llama
    assert "build_llama() builds LlamaForCausalLM(LlamaConfig(...)); checked as that, a small model" in llama
    vit = table(root, "models/factory.py:build_vit")
    assert 'inputs = {pixel_values = "f32[batch, 3, 32, 32]"}' in vit  # from the config the factory writes
    gpt2 = table(root, "models/factory.py:build_gpt2")
    assert "use_cache = false" in gpt2  # else forward returns a cache object torch cannot flatten
    checked = exportlens(root, "check")
    assert "5 modules: 5 exported, 0 failed" in checked.stdout, checked.stdout + checked.stderr


AUDIO = """
from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel, Wav2Vec2Config, Wav2Vec2Model
from transformers import WhisperConfig, WhisperForAudioClassification


class Captioner(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.lm = GPT2LMHeadModel(config)

    def forward(self, input_ids):
        return self.lm(input_ids).logits


def build_wav2vec():
    return Wav2Vec2Model(Wav2Vec2Config())


def build_whisper():
    return WhisperForAudioClassification(WhisperConfig(max_source_positions=64))
"""


def test_speech_models_get_their_installed_forwards_inputs(tmp_path: Path) -> None:
    root = _project(tmp_path, {"audio.py": AUDIO})
    done = exportlens(root, "init")
    for name in ("Captioner", "build_wav2vec", "build_whisper"):
        assert f"models/audio.py:{name}: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    assert 'init = {config = {call = "transformers:GPT2Config", kwargs = {num_hidden_layers = 2' in table(
        root, "models/audio.py:Captioner"
    )
    assert 'inputs = {input_values = "f32[batch, 16000]"}' in table(root, "models/audio.py:build_wav2vec")
    # Whisper's frames: twice its encoder's positions (the config's, as the factory writes it)
    assert 'inputs = {input_features = "f32[batch, 80, 128]"}' in table(root, "models/audio.py:build_whisper")
    checked = exportlens(root, "check")
    assert "3 modules: 3 exported, 0 failed" in checked.stdout, checked.stdout + checked.stderr
