"""A real project written the way real projects build models: a factory function and
transformers config objects in pyproject.toml, with no wrapper class at all. Checked
with the CLI, as a user runs it (tiny configs: no weights are downloaded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed"),
]

REPO = Path(__file__).resolve().parent.parent

FACTORIES = """
from transformers import BertConfig, BertModel


def build_bert(hidden=32, layers=2):
    config = BertConfig(vocab_size=100, hidden_size=hidden, num_hidden_layers=layers, \
num_attention_heads=2, intermediate_size=64)
    return BertModel(config)
"""

SPEC = """
[tool.exportlens.modules."models/text.py:build_bert"]
factory = "models/text.py:build_bert"
init = { hidden = 32 }
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }

[tool.exportlens.modules."models/text.py:llama"]
factory = "transformers:LlamaForCausalLM"
init = { config = { call = "transformers:LlamaConfig", kwargs = { vocab_size = 100, hidden_size = 32, \
intermediate_size = 64, num_hidden_layers = 2, num_attention_heads = 2, num_key_value_heads = 1, \
use_cache = false } } }
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
dims = { batch = { min = 1, max = 8 } }

[[tool.exportlens.modules."models/text.py:llama".variants]]
name = "short"
dims = { seq = { min = 2, max = 32 } }

[[tool.exportlens.modules."models/text.py:llama".variants]]
name = "long"
dims = { seq = { min = 2, max = 256 } }
"""


def test_bert_and_llama_from_configs_check_with_no_wrapper_class(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "text.py").write_text(FACTORIES)
    (tmp_path / "pyproject.toml").write_text(SPEC)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", str(tmp_path), "--format", "json"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = {m["target"]: m for m in json.loads(done.stdout)["modules"]}
    assert {t: m["status"] for t, m in modules.items()} == {
        "models/text.py:build_bert": "exported",
        "models/text.py:llama[short]": "exported",
        "models/text.py:llama[long]": "exported",
    }
    ranges = {t: m["summary"]["range_constraints"] for t, m in modules.items()}
    assert {"name": "seq", "low": 2, "high": 32} in ranges["models/text.py:llama[short]"]
    assert {"name": "seq", "low": 2, "high": 256} in ranges["models/text.py:llama[long]"]
    assert {"name": "seq", "low": 2, "high": 64} in ranges["models/text.py:build_bert"]
