"""Real models, built from transformers configs (no weights are downloaded): each exports
through exportlens, and the summary speaks the spec's Dim names."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

# slow: not even imported for `-m "not slow"` (transformers takes seconds to import)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed"),
]

# Each check runs the in-process runtime in a fresh interpreter, as a worker would: the test
# process has imported what other tests did (executorch brings torchao, whose operators
# transformers then meets a second time), and a model's import must not depend on that.
_FRESH_CHECK = """
import json, sys
from pathlib import Path
from exportlens.exporter.core.report import to_dict
from exportlens.exporter.runtime.in_process import export_plan
from exportlens.exporter.runtime.run import Options
from exportlens.exporter.spec.plan import make_plan
report = export_plan(make_plan([Path(sys.argv[1])]), Options(collect_all=sys.argv[2] == "True"))
print(json.dumps(to_dict(report)))
"""


@pytest.fixture
def project(project, monkeypatch):
    def check(*, collect_all: bool = True):
        from exportlens.exporter.core.report import Report, from_dict

        command = [sys.executable, "-c", _FRESH_CHECK, str(project.root), str(collect_all)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        return from_dict(Report, json.loads(done.stdout.splitlines()[-1]))

    monkeypatch.setattr(project, "check", check)
    return project


SPEC = """
[tool.exportlens.modules."models/bert.py:TinyBert"]
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 }, \
attention_mask = { shape = "i64[batch, seq]", fill = "ones" } }
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }

[tool.exportlens.modules."models/llama.py:TinyLlama"]
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }
"""

BERT = """
import torch
from transformers import BertConfig, BertModel


class TinyBert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, \
intermediate_size=64)
        self.bert = BertModel(config)

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
"""

LLAMA = """
import torch
from transformers import LlamaConfig, LlamaForCausalLM


class TinyLlama(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=2, num_key_value_heads=1, use_cache=False)
        self.llama = LlamaForCausalLM(config)

    def forward(self, input_ids):
        logits = self.llama(input_ids=input_ids).logits
        return logits
"""


def test_tiny_bert_and_llama_export_in_the_users_names(project):
    project.write("pyproject.toml", SPEC)
    project.write("models/bert.py", BERT)
    project.write("models/llama.py", LLAMA)
    report = project.check()
    by_target = {m.target: m for m in report.modules}

    bert = by_target["models/bert.py:TinyBert"]
    assert bert.status.value == "exported", [str(f) for f in bert.findings]
    assert (
        bert.summary.signature == "(input_ids: i64[batch, seq], attention_mask: i64[batch, seq]) -> f32[batch, seq, 32]"
    )
    assert set(map(str, bert.summary.range_constraints)) == {"batch ∈ [1, 8]", "seq ∈ [2, 64]"}

    llama = by_target["models/llama.py:TinyLlama"]
    assert llama.status.value == "exported", [str(f) for f in llama.findings]
    assert llama.summary.signature == "(input_ids: i64[batch, seq]) -> f32[batch, seq, 100]"
    # the line of forward that calls the model is where its output's shape shows
    line = (
        project.read("models/llama.py").splitlines().index("        logits = self.llama(input_ids=input_ids).logits")
        + 1
    )
    shapes = {ls.line: ls.shapes for ls in llama.summary.line_shapes if ls.path == "models/llama.py"}
    assert shapes[line][-1] == "f32[batch, seq, 100]"


def test_a_llama_that_returns_its_cache_is_told_on_the_return_line(project):
    project.write("pyproject.toml", SPEC)
    project.write(
        "models/llama.py",
        LLAMA.replace("use_cache=False", "use_cache=True").replace(
            "logits = self.llama(input_ids=input_ids).logits\n        return logits",
            "return self.llama(input_ids=input_ids)",
        ),
    )
    llama = project.module("models/llama.py:TinyLlama")
    (f,) = llama.findings
    assert f.code == "EL304"
    assert (
        f.line
        == project.read("models/llama.py").splitlines().index("        return self.llama(input_ids=input_ids)") + 1
    )
    assert "`DynamicCache`" in f.message and "`use_cache=False`" in f.message


GPT2 = """
import torch
from transformers import GPT2Config, GPT2Model


class ShortGpt2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = GPT2Config(vocab_size=100, n_positions=128, n_embd=32, n_layer=2, n_head=2, use_cache=False)
        self.gpt2 = GPT2Model(config)

    def forward(self, input_ids):
        return self.gpt2(input_ids=input_ids).last_hidden_state
"""


def test_a_gpt2_declared_past_its_positions_is_told_the_range_it_can_serve(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."models/gpt2.py:ShortGpt2"]
        inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
        dims = { batch = { min = 1, max = 4 }, seq = { min = 2, max = 1024 } }
        """,
    )
    project.write("models/gpt2.py", GPT2)
    (finding,) = project.module("ShortGpt2").findings  # torch.export alone calls it exported
    assert finding.code == "EL206" and finding.path == "pyproject.toml"
    assert finding.message.startswith("`seq` is declared as [2, 1024], but at seq = 1024 forward fails: IndexError")
    (fix,) = finding.fixes
    assert fix.title == "Set `seq` to Dim('seq', max=128)"
    project.apply(fix)
    after = project.module("ShortGpt2")
    assert after.status.value == "exported", [str(f) for f in after.findings]
    assert "seq ∈ [2, 128]" in map(str, after.summary.range_constraints)


LLAMA_7B = Path(__file__).parent / "data" / "llama7b"  # its spec puts it on meta; bench/bench_meta.py checks the same


def test_a_7b_llama_checks_on_meta_without_its_weights(project):
    """6.7 B parameters would need about 27 GB on cpu; on meta none are allocated
    (bench/bench_meta.py measures the time and memory)."""
    shutil.copytree(LLAMA_7B, project.root, dirs_exist_ok=True)
    report = project.module("Llama7B")
    assert report.status.value == "exported", [str(f) for f in report.findings]
    assert "batch" in report.summary.signature and "seq" in report.summary.signature
    assert {r.name for r in report.summary.range_constraints} >= {"batch", "seq"}
