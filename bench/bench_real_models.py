"""A whole project of real models: ``exportlens check`` against plain torch, in one run.

Writes a temporary project: transformers architectures built from tiny configs (hidden
32, 2 layers, vocab 100; no weights are downloaded), each inside a wrapper
``nn.Module``, plus four hand-written modules that fail the way people's modules fail
(a ``view(4, -1)`` that hard-codes the batch, an ``.item()`` branch, two lengths that
must be equal declared as independent dims, a declared ``seq`` longer than a position
table). ``pyproject.toml`` has one ``[tool.exportlens.modules."models/x.py:Class"]``
table per module, with explicit example sizes so both sides trace the same shapes.

First, untimed, ``exportlens check --no-cache --format json`` must say ``exported`` for
every transformers module and ``failed`` for every hand-written one. Then, ``--reps``
times (median), alternating:

- **plain torch**: a fresh ``python3`` that imports torch and the project's modules
  (so transformers), constructs each module, builds the same example inputs and
  ``Dim``s, runs ``torch.export.export`` (non-strict) on each and
  ``torch.export.draft_export`` on each that fails: one process, a plain loop. Wall
  time from spawn to exit, as the user pays it; the loop's own time is printed too.
- **exportlens**: ``exportlens check DIR --no-cache --format json`` as a user runs it,
  with ``--jobs 1`` and with the default jobs (the number of cores), each its own row.

Goal (issue 12): each exportlens row ≤ 1.1× plain torch.

    python bench/bench_real_models.py            # one of each: about 1 minute on 2 cores
    python bench/bench_real_models.py --reps 3
    python bench/bench_real_models.py --quick    # one architecture, one hand-written module (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

IDS = {"shape": "i64[batch, seq]", "low": 0, "high": 100}
MASK = {"shape": "i64[batch, seq]", "fill": "ones"}
BATCH = {"min": 1, "max": 8, "example": 3}
SEQ = {"min": 2, "max": 64, "example": 12}
TEXT = {"batch": BATCH, "seq": SEQ}


@dataclass
class Module:
    file: str  # models/<file>.py
    cls: str
    source: str
    inputs: dict[str, dict]  # forward's parameters, in order: shape string, low/high or fill
    dims: dict[str, dict]  # name -> min, max, example
    fails: bool = False  # hand-written, expected to fail

    @property
    def target(self) -> str:
        return f"models/{self.file}.py:{self.cls}"


def hf(cls: str, imports: str, config: str, build: str, params: str, call: str) -> str:
    """A wrapper nn.Module around a transformers model built from a tiny config."""
    return f"""
import torch
from transformers import {imports}


class {cls}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = {config}
        self.model = {build}

    def forward(self, {params}):
        return {call}
"""


ARCHITECTURES = [
    Module(
        "bert",
        "TinyBert",
        hf(
            "TinyBert",
            "BertConfig, BertModel",
            "BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,"
            " intermediate_size=64)",
            "BertModel(config)",
            "input_ids, attention_mask",
            "self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state",
        ),
        {"input_ids": IDS, "attention_mask": MASK},
        TEXT,
    ),
    Module(
        "distilbert",
        "TinyDistilBert",
        hf(
            "TinyDistilBert",
            "DistilBertConfig, DistilBertModel",
            "DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64)",
            "DistilBertModel(config)",
            "input_ids, attention_mask",
            "self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state",
        ),
        {"input_ids": IDS, "attention_mask": MASK},
        TEXT,
    ),
    Module(
        "llama",
        "TinyLlama",
        hf(
            "TinyLlama",
            "LlamaConfig, LlamaForCausalLM",
            "LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,\n"
            "                             num_attention_heads=2, num_key_value_heads=1, use_cache=False)",
            "LlamaForCausalLM(config)",
            "input_ids",
            "self.model(input_ids=input_ids).logits",
        ),
        {"input_ids": IDS},
        TEXT,
    ),
    Module(
        "mistral",
        "TinyMistral",
        hf(
            "TinyMistral",
            "MistralConfig, MistralForCausalLM",
            "MistralConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,\n"
            "                               num_attention_heads=2, num_key_value_heads=1, use_cache=False)",
            "MistralForCausalLM(config)",
            "input_ids",
            "self.model(input_ids=input_ids).logits",
        ),
        {"input_ids": IDS},
        TEXT,
    ),
    Module(
        "qwen2",
        "TinyQwen2",
        hf(
            "TinyQwen2",
            "Qwen2Config, Qwen2ForCausalLM",
            "Qwen2Config(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,\n"
            "                             num_attention_heads=2, num_key_value_heads=1, use_cache=False)",
            "Qwen2ForCausalLM(config)",
            "input_ids",
            "self.model(input_ids=input_ids).logits",
        ),
        {"input_ids": IDS},
        TEXT,
    ),
    Module(
        "gpt2",
        "TinyGpt2",
        hf(
            "TinyGpt2",
            "GPT2Config, GPT2Model",
            "GPT2Config(vocab_size=100, n_positions=128, n_embd=32, n_layer=2, n_head=2, use_cache=False)",
            "GPT2Model(config)",
            "input_ids",
            "self.model(input_ids=input_ids).last_hidden_state",
        ),
        {"input_ids": IDS},
        TEXT,
    ),
    Module(
        "t5",
        "TinyT5Encoder",
        hf(
            "TinyT5Encoder",
            "T5Config, T5EncoderModel",
            "T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2)",
            "T5EncoderModel(config)",
            "input_ids, attention_mask",
            "self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state",
        ),
        {"input_ids": IDS, "attention_mask": MASK},
        TEXT,
    ),
    Module(
        "bart",
        "TinyBartEncoder",
        hf(
            "TinyBartEncoder",
            "BartConfig, BartModel",
            "BartConfig(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,\n"
            "                            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,\n"
            "                            max_position_embeddings=128)",
            "BartModel(config).get_encoder()",
            "input_ids, attention_mask",
            "self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state",
        ),
        {"input_ids": IDS, "attention_mask": MASK},
        TEXT,
    ),
    Module(
        "clip",
        "TinyClipText",
        hf(
            "TinyClipText",
            "CLIPTextConfig, CLIPTextModel",
            "CLIPTextConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,\n"
            "                                num_attention_heads=2, max_position_embeddings=64)",
            "CLIPTextModel(config)",
            "input_ids",
            "self.model(input_ids=input_ids).last_hidden_state",
        ),
        {"input_ids": IDS},
        TEXT,
    ),
    Module(
        "vit",
        "TinyVit",
        hf(
            "TinyVit",
            "ViTConfig, ViTModel",
            "ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,\n"
            "                           image_size=32, patch_size=8, num_channels=3)",
            "ViTModel(config)",
            "pixel_values",
            "self.model(pixel_values=pixel_values).last_hidden_state",
        ),
        {"pixel_values": {"shape": "f32[batch, 3, 32, 32]"}},
        {"batch": BATCH},
    ),
    Module(
        "whisper",
        "TinyWhisperEncoder",
        hf(
            "TinyWhisperEncoder",
            "WhisperConfig, WhisperModel",
            "WhisperConfig(vocab_size=100, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,\n"
            "                               encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,\n"
            "                               decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,\n"
            "                               pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)",
            "WhisperModel(config).get_encoder()",
            "input_features",
            "self.model(input_features=input_features).last_hidden_state",
        ),
        {"input_features": {"shape": "f32[batch, 16, 32]"}},  # 2 * max_source_positions frames
        {"batch": BATCH},
    ),
]

HAND_WRITTEN = [
    Module(
        "pooled_head",
        "PooledHead",
        """
import torch
from torch import nn


class PooledHead(nn.Module):
    \"\"\"Flattens each example's tokens into one vector for the classifier.\"\"\"

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.classifier = nn.Linear(16 * 8, 10)

    def forward(self, x):
        h = torch.relu(self.proj(x))
        return self.classifier(h.view(4, -1))
""",
        {"x": {"shape": "f32[batch, 16, 8]"}},
        {"batch": {"min": 1, "max": 32, "example": 4}},
        fails=True,
    ),
    Module(
        "masked_mean",
        "MaskedMean",
        """
import torch
from torch import nn


class MaskedMean(nn.Module):
    \"\"\"Mean over the tokens the mask keeps; all of them when it keeps none.\"\"\"

    def forward(self, x, mask):
        if mask.sum().item() == 0:
            return x.mean(dim=1)
        return (x * mask.unsqueeze(-1)).sum(dim=1) / mask.sum(dim=1, keepdim=True)
""",
        {"x": {"shape": "f32[batch, seq, 8]"}, "mask": {"shape": "f32[batch, seq]", "fill": "ones"}},
        TEXT,
        fails=True,
    ),
    Module(
        "cross_gate",
        "CrossGate",
        """
import torch
from torch import nn


class CrossGate(nn.Module):
    \"\"\"Gates the text features with the audio features, frame by frame.\"\"\"

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 8)

    def forward(self, text, audio):
        return text * torch.sigmoid(self.gate(audio))
""",
        {"text": {"shape": "f32[batch, text_len, 8]"}, "audio": {"shape": "f32[batch, audio_len, 8]"}},
        {
            "batch": BATCH,
            "text_len": {"min": 2, "max": 256, "example": 20},
            "audio_len": {"min": 2, "max": 256, "example": 20},
        },
        fails=True,
    ),
    Module(
        "positional",
        "PositionalEncoder",
        """
import torch
from torch import nn


class PositionalEncoder(nn.Module):
    \"\"\"Adds a learned position embedding to each token.\"\"\"

    def __init__(self, max_len=128):
        super().__init__()
        self.max_len = max_len
        self.pos = nn.Embedding(max_len, 16)

    def forward(self, x):
        if x.shape[1] > self.max_len:
            raise ValueError(f"sequences longer than {self.max_len} are not supported")
        positions = torch.arange(x.shape[1], device=x.device)
        return x + self.pos(positions)
""",
        {"x": {"shape": "f32[batch, seq, 16]"}},
        {"batch": BATCH, "seq": {"min": 2, "max": 512, "example": 12}},
        fails=True,
    ),
]

PLAIN = """
import importlib, json, sys, time
started = time.perf_counter()
import torch
from torch.export import Dim

root, modules = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, root)
imported = {m["target"]: importlib.import_module(m["module"]) for m in modules}  # transformers too
imports_s = time.perf_counter() - started

DTYPES = {"f32": torch.float32, "i64": torch.int64}


def tensor(spec, sizes):
    dtype = DTYPES[spec["dtype"]]
    if spec.get("fill") == "ones":
        return torch.ones(sizes, dtype=dtype)
    if dtype.is_floating_point:
        return torch.randn(sizes, dtype=dtype)
    return torch.randint(spec.get("low", 0), spec.get("high", 10), sizes, dtype=dtype)


loop_started, verdicts, seconds = time.perf_counter(), {}, {}
for m in modules:
    one = time.perf_counter()
    model = getattr(imported[m["target"]], m["cls"])().eval()
    torch.manual_seed(0)
    dims = {name: Dim(name, min=d["min"], max=d["max"]) for name, d in m["dims"].items()}
    args = tuple(tensor(spec, [m["dims"][s]["example"] if isinstance(s, str) else s for s in spec["sizes"]]) \
for spec in m["inputs"])
    dynamic_shapes = {
        spec["name"]: {axis: dims[s] for axis, s in enumerate(spec["sizes"]) if isinstance(s, str)} \
for spec in m["inputs"]
    }
    try:
        torch.export.export(model, args, dynamic_shapes=dynamic_shapes, strict=False)
        verdicts[m["target"]] = "exported"
    except Exception:
        torch.export.draft_export(model, args, dynamic_shapes=dynamic_shapes, strict=False)
        verdicts[m["target"]] = "failed"
    seconds[m["target"]] = time.perf_counter() - one
loop_s = time.perf_counter() - loop_started
print(json.dumps({"imports_s": imports_s, "loop_s": loop_s, "verdicts": verdicts, "seconds": seconds}))
"""


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def write_project(root: Path, modules: list[Module]) -> None:
    (root / "models").mkdir(parents=True)
    (root / "models" / "__init__.py").write_text("")
    tables = []
    for m in modules:
        (root / "models" / f"{m.file}.py").write_text(textwrap.dedent(m.source).lstrip())
        inputs = {name: spec if "low" in spec or "fill" in spec else spec["shape"] for name, spec in m.inputs.items()}
        tables.append(
            f'[tool.exportlens.modules."{m.target.split(":")[0]}:{m.cls}"]\n'
            f"inputs = {toml_value(inputs)}\ndims = {toml_value(m.dims)}\n"
        )
    (root / "pyproject.toml").write_text("\n".join(tables))


def plain_description(modules: list[Module]) -> str:
    """The same modules, inputs and dims, for the plain loop (which does not read pyproject.toml)."""
    described = []
    for m in modules:
        inputs = []
        for name, spec in m.inputs.items():
            dtype, sizes = spec["shape"].rstrip("]").split("[")
            sizes = [int(s) if s.strip().isdigit() else s.strip() for s in sizes.split(",")]
            inputs.append(
                {"name": name, "dtype": dtype, "sizes": sizes} | {k: v for k, v in spec.items() if k != "shape"}
            )
        described.append(
            {"target": m.target, "module": f"models.{m.file}", "cls": m.cls, "inputs": inputs, "dims": m.dims}
        )
    return json.dumps(described)


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - started, done


def check(root: Path, *extra: str) -> tuple[float, dict]:
    exportlens = str(Path(sys.executable).with_name("exportlens"))
    seconds, done = timed([exportlens, "check", str(root), "--no-cache", "--format", "json", *extra], root)
    try:
        return seconds, json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(f"exportlens check {' '.join(extra)} gave no JSON (exit {done.returncode}):\n{done.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1, help="timed runs of each side (the median is shown)")
    parser.add_argument("--quick", action="store_true", help="one architecture and one hand-written module (CI)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        modules = ARCHITECTURES[:1] + HAND_WRITTEN[:1] if args.quick else ARCHITECTURES + HAND_WRITTEN
        write_project(root, modules)

        # untimed: every architecture must export and every hand-written module fail; drop those that do not
        _, report = check(root)
        status = {m["target"]: m["status"] for m in report["modules"]}
        dropped = [m for m in modules if status.get(m.target) != ("failed" if m.fails else "exported")]
        for m in dropped:
            first = next((f for r in report["modules"] if r["target"] == m.target for f in r["findings"]), None)
            why = f"{first['code']} {first['message']}" if first else "no finding"
            print(f"dropped {m.target}: exportlens says {status.get(m.target, 'nothing')} ({why[:300]})")
        if dropped:
            modules = [m for m in modules if m not in dropped]
            root = Path(tmp) / "kept"
            write_project(root, modules)

        described = plain_description(modules)
        runs: dict[str, list[float]] = {"plain": [], "jobs1": [], "jobsN": []}
        plain_runs, reports = [], {}
        for rep in range(args.reps):
            for key in (order := list(runs))[rep % 3 :] + order[: rep % 3]:  # each rep starts with another side
                if key == "plain":
                    seconds, done = timed([sys.executable, "-c", PLAIN, str(root), described], root)
                    if done.returncode != 0:
                        sys.exit(f"the plain loop failed:\n{done.stderr[-3000:]}")
                    plain_runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
                else:
                    seconds, reports[key] = check(root, *(("--jobs", "1") if key == "jobs1" else ()))
                runs[key].append(seconds)
    load_after = os.getloadavg()

    arch = sum(not m.fails for m in modules)
    plain = statistics.median(runs["plain"])
    loop = statistics.median(r["loop_s"] for r in plain_runs)
    imports = statistics.median(r["imports_s"] for r in plain_runs)
    print(
        f"\n{len(modules)} modules: {arch} transformers architectures, {len(modules) - arch} hand-written that fail "
        f"(torch {report['modules'][0].get('torch_version', '?')}, {os.cpu_count()} cores, "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; median of {args.reps})\n"
    )
    print("| | wall | ÷ plain torch | goal |")
    print("|---|---|---|---|")
    print(f"| plain torch: fresh `python3`, export loop (+ draft_export of each failure) | {plain:.1f} s | 1.00× | |")
    print(f"| &nbsp;&nbsp;of which importing torch and the models (transformers) | {imports:.1f} s | | |")
    print(f"| &nbsp;&nbsp;of which the loop (construct, inputs, export, draft_export) | {loop:.1f} s | | |")
    for key, label in (
        ("jobs1", "`exportlens check --no-cache --jobs 1`"),
        ("jobsN", f"`exportlens check --no-cache` (jobs {os.cpu_count()})"),
    ):
        seconds = statistics.median(runs[key])
        busy = sum(m["seconds"] for m in reports[key]["modules"])
        print(
            f"| {label}; modules' `seconds` sum to {busy:.1f} s | {seconds:.1f} s | {seconds / plain:.2f}× | ≤ 1.1× |"
        )

    print("\n| module | plain torch | exportlens (`seconds`, jobs 1) | verdicts |")
    print("|---|---|---|---|")
    ours = {m["target"]: m for m in reports["jobs1"]["modules"]}
    for m in modules:
        p = statistics.median(r["seconds"][m.target] for r in plain_runs)
        verdict = plain_runs[-1]["verdicts"][m.target]
        print(
            f"| `{m.target}` | {p:.2f} s | {ours[m.target]['seconds']:.2f} s |"
            f" torch {verdict}, exportlens {ours[m.target]['status']} |"
        )
    expected = {m.target: "failed" if m.fails else "exported" for m in modules}
    said = {key: {r["target"]: r for r in reports[key]["modules"]} for key in ("jobs1", "jobsN")}
    for side, verdicts in [("plain torch", plain_runs[-1]["verdicts"])] + [
        (f"exportlens {key}", {t: r["status"] for t, r in said[key].items()}) for key in ("jobs1", "jobsN")
    ]:
        for target, want in expected.items():
            if verdicts.get(target) != want:
                why = [
                    f"{f['code']} {f['message']}"
                    for f in said.get(side.removeprefix("exportlens "), {}).get(target, {}).get("findings", [])
                ]
                print(f"unexpected: {side} says {verdicts.get(target)} for {target}, not {want}: {why}")
    worst = max(statistics.median(runs[k]) for k in ("jobs1", "jobsN")) / plain
    print(f"\ngoal ≤ 1.1× plain torch: {'met' if worst <= 1.1 else 'NOT met'} (worst row {worst:.2f}×)")


if __name__ == "__main__":
    main()
