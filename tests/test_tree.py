"""``exportlens tree``: which submodule of a model breaks its export, the smallest first,
each failure on the user's line; real exports, the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import Project, line_of

from exportlens.exporter.core.tree import Verdict
from exportlens.exporter.spec.plan import make_plan

REPO = Path(__file__).resolve().parent.parent

SPEC = """
[tool.exportlens.modules."net.py:Net"]
inputs = { x = { shape = "f32[batch, seq, 16]" }, mask = { shape = "bool[batch, seq]", fill = "ones" } }
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }
"""

# one bad attention block, three levels down (Net -> Stack -> Block -> attention)
NET = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


class MaskedAttention(Attention):
    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if mask.sum() > 0:
            q = q * 2
        return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


class Block(nn.Module):
    def __init__(self, masked):
        super().__init__()
        self.attn = MaskedAttention() if masked else Attention()
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))

    def forward(self, x, mask):
        x = x + self.attn(x, mask)
        return x + self.mlp(x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(False), Block(True), Block(False)])
        self.unused = nn.Linear(16, 16)

    def forward(self, x, mask):
        for block in self.blocks:
            x = block(x, mask)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Stack()
        self.head = nn.Linear(16, 4)

    def forward(self, x, mask):
        return self.head(self.encoder(x, mask))
"""


def exportlens(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_bad_block_is_the_smallest_failing_submodule_and_its_siblings_export(project: Project):
    """In this process (no worker): each node's verdict, and the dims carried down."""
    from exportlens.exporter.runtime.subtree import tree_of  # torch

    project.write("pyproject.toml", SPEC)
    project.write("net.py", NET)
    plan = make_plan([project.root])
    (planned,) = [m for m in plan.modules if m.target == "net.py:Net"]
    tree = tree_of(plan, planned)
    verdicts = {n.path: n.verdict for n in tree.nodes}
    (smallest,) = tree.to_fix()
    assert smallest.path == "encoder.blocks.1.attn" and smallest.cls == "MaskedAttention"
    assert (smallest.finding.code, smallest.finding.path) == ("EL101", "net.py")
    assert smallest.finding.line == line_of(project, "net.py", "if mask.sum() > 0:")
    # its parents fail with it; its siblings, cousins and own children export
    assert {p for p, v in verdicts.items() if v is Verdict.FAILS} == {"", "encoder", "encoder.blocks.1", smallest.path}
    for path in ("encoder.blocks.0.attn", "encoder.blocks.2.attn", "encoder.blocks.1.mlp", "encoder.blocks.1.attn.qkv"):
        assert verdicts[path] is Verdict.EXPORTED, path
    assert verdicts["encoder.unused"] is Verdict.NOT_CALLED
    assert "encoder.blocks" not in verdicts  # a ModuleList is never called: its blocks are
    # the model's dims reach the blocks' inputs by name, the hidden size stays a size
    assert tree.carried == ("batch", "seq")
    assert smallest.inputs == "(x: f32[batch, seq, 16], mask: bool[batch, seq])"
    # one export per distinct submodule: the third block is the first one's
    assert {n.path: n.same_as for n in tree.nodes}["encoder.blocks.2"] == "encoder.blocks.0"


@pytest.mark.slow
def test_tree_prints_the_block_to_fix_on_its_line_then_the_tree(project: Project):
    project.write("pyproject.toml", SPEC)
    project.write("net.py", NET)
    done = exportlens("tree", "net.py:Net", cwd=project.root)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    line = line_of(project, "net.py", "if mask.sum() > 0:")
    assert lines[0] == "smallest failing submodule (fix this first):"
    assert lines[1].startswith(f"  encoder.blocks.1.attn (MaskedAttention): net.py:{line}:12: EL101 `mask.sum() > 0`")
    assert "ok         attn Attention (x: f32[batch, seq, 16], mask: bool[batch, seq]) exports" in lines
    assert (
        "FAIL       attn MaskedAttention (x: f32[batch, seq, 16], mask: bool[batch, seq])"
        f" fails: EL101 at net.py:{line}" in lines
    )
    assert "--       unused Linear not called" in lines
    assert lines[-1].startswith(
        "24 submodules and the module: 20 export, 4 fail, 1 not called; dims carried down: batch, seq;"
    )


@pytest.mark.slow
def test_tree_on_meta_names_the_same_block_and_says_where_its_run_stopped(project: Project):
    project.write("pyproject.toml", SPEC + 'device = "meta"\n')
    project.write("net.py", NET)
    done = exportlens("tree", "net.py:Net", "--format", "json", cwd=project.root)
    assert done.returncode == 1, done.stderr
    tree = json.loads(done.stdout)
    assert tree["to_fix"] == ["encoder.blocks.1.attn"]
    by_path = {n["path"]: n for n in tree["nodes"]}
    line = line_of(project, "net.py", "if mask.sum() > 0:")
    assert (
        by_path["encoder.blocks.1.attn"]["finding"]["code"],
        by_path["encoder.blocks.1.attn"]["finding"]["line"],
    ) == (
        "EL101",
        line,
    )
    assert by_path["encoder.blocks.0.attn"]["verdict"] == "exported"
    # a value cannot be read on meta: the run that records the inputs stops at the bad line
    assert tree["stopped"].startswith(f"forward raised RuntimeError at net.py:{line}")
    assert by_path["head"]["verdict"] == "not-called"


@pytest.mark.slow
def test_a_module_that_exits_gives_the_finding_check_gives(project: Project):
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Quits"]\ninputs = { x = "f32[2, 4]" }\n')
    project.write(
        "net.py",
        "import sys\nfrom torch import nn\n\n\nclass Quits(nn.Module):\n"
        "    def forward(self, x):\n        sys.exit(3)\n",
    )
    done = exportlens("tree", "net.py:Quits", cwd=project.root)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["net.py:5:7: EL502 the module called sys.exit(3) while exporting"]


LLAMA = """
import torch
from transformers import LlamaConfig, LlamaForCausalLM


class TinyLlama(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, use_cache=False)
        self.model = LlamaForCausalLM(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).logits
"""

BERT = """
import torch
from transformers import BertConfig, BertModel


class TinyBert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=128)
        self.bert = BertModel(config)

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
"""

REAL_SPEC = """
[tool.exportlens.modules."llama.py:TinyLlama"]
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }

[tool.exportlens.modules."bert.py:TinyBert"]
dims = { batch = { min = 1, max = 8 }, seq = { min = 2, max = 64 } }

[tool.exportlens.modules."bert.py:TinyBert".inputs]
input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 }
attention_mask = { shape = "i64[batch, seq]", fill = "ones" }
"""

needs_transformers = pytest.mark.skipif(find_spec("transformers") is None, reason="transformers is not installed")


@pytest.mark.slow
@needs_transformers
def test_tree_of_a_tiny_llama_exports_each_layer_with_the_dims_carried_down(project: Project):
    project.write("pyproject.toml", REAL_SPEC)
    project.write("llama.py", LLAMA)
    done = exportlens("tree", "llama.py:TinyLlama", cwd=project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    attention = next(line for line in lines if " self_attn LlamaAttention " in line)
    assert attention.startswith("ok") and "hidden_states: f32[batch, seq, 64]" in attention
    assert any(line.endswith("exports (as model.model.layers.0)") for line in lines)  # layer 1: layer 0's export
    assert lines[-1].endswith("s") and "0 fail" in lines[-1] and "dims carried down: batch, seq" in lines[-1]


@pytest.mark.slow
@needs_transformers
def test_tree_of_a_tiny_bert_as_json(project: Project):
    project.write("pyproject.toml", REAL_SPEC)
    project.write("bert.py", BERT)
    done = exportlens("tree", "bert.py:TinyBert", "--format", "json", cwd=project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    tree = json.loads(done.stdout)
    by_path = {n["path"]: n for n in tree["nodes"]}
    assert by_path["bert.encoder.layer.0.attention.self"]["verdict"] == "exported"
    assert by_path["bert.encoder.layer.0.attention.self"]["inputs"] == "(hidden_states: f32[batch, seq, 64])"
    assert by_path["bert.encoder.layer.1"]["same_as"] == "bert.encoder.layer.0"
    assert by_path["bert.pooler.dense"]["inputs"] == "(input: f32[batch, 64])"
    assert tree["to_fix"] == [] and tree["carried"] == ["batch", "seq"]
