"""`exportlens init` for modules built from a Hugging Face config (issue 35): the config is
built from its own defaults as a small model (layers 2, hidden 64, vocabulary 1000, 128
positions), the spec's comment says so, and the spec it writes exports."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import tomlkit

pytestmark = [
    pytest.mark.slow,  # transformers' import and two real exports
    pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed"),
]

LLAMA = """\
from torch import nn
from transformers import LlamaConfig, LlamaModel


class Decoder(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.model = LlamaModel(config)

    def forward(self, input_ids, attention_mask=None):
        return self.model(input_ids, attention_mask=attention_mask).last_hidden_state
"""

GPT2 = """\
from torch import nn
from transformers import GPT2Config, GPT2Model


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gpt = GPT2Model(config)
        self.head = nn.Linear(config.n_embd, 2)

    def forward(self, input_ids):
        return self.head(self.gpt(input_ids).last_hidden_state)
"""


def exportlens(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = shutil.which("exportlens", path=str(Path(sys.executable).parent))
    assert command is not None
    return subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, timeout=900)


def test_init_builds_a_small_model_from_a_transformers_config_and_check_exports_it(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models/llama.py").write_text(LLAMA, encoding="utf-8")
    (tmp_path / "models/gpt2.py").write_text(GPT2, encoding="utf-8")
    (tmp_path / ".git").mkdir()

    done = exportlens(tmp_path, "init")
    assert "models/llama.py:Decoder: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    assert "models/gpt2.py:Encoder: wrote a spec; exports" in done.stdout, done.stdout + done.stderr
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    modules = tomlkit.parse(text).unwrap()["tool"]["exportlens"]["modules"]
    llama = modules["models/llama.py:Decoder"]
    assert llama["init"]["config"]["call"] == "transformers:LlamaConfig"
    assert llama["init"]["config"]["kwargs"]["num_hidden_layers"] == 2
    assert llama["dims"]["seq"] == {"min": 2, "max": 128}  # the small model's positions bound the sequence
    assert "attention_mask" not in llama["inputs"]  # an optional input keeps its default
    assert modules["models/gpt2.py:Encoder"]["init"]["config"]["call"] == "transformers:GPT2Config"
    assert "#   init config: LlamaConfig() from its defaults, a small model: num_hidden_layers 2" in text

    checked = exportlens(tmp_path, "check", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip().splitlines()[-1] == "2 modules: 2 exported, 0 failed, 0 skipped"
