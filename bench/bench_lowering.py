"""Lowering beside exporting: per deployment target, how long compiling the exported program
takes next to the export itself, measured in the same run, and how large the artifact is.

Writes a temporary project: ``examples/`` (its modules and specs) plus three transformers
architectures built from tiny configs (BERT, Llama, ViT: hidden 32, 2 layers; no weights are
downloaded). In one process, for each module that exports: the module and its example inputs
built from the spec as exportlens builds them, then timed

- **export**: ``torch.export.export(model, args, kwargs, dynamic_shapes=..., strict=...)``;
- **each target**: what exportlens's lowering process runs on that program
  (``runtime/lowering/compiled.COMPILE``): ``torch.onnx.export(ep, dynamo=True)`` and
  an onnxruntime session, ``aoti_compile_and_package`` and loading the package, and
  ExecuTorch's XNNPACK lowering where executorch is installed;

and printed as seconds, the ratio to the export, and the artifact's size.

    python bench/bench_lowering.py              # about 5 minutes on 2 cores, AOTInductor included
    python bench/bench_lowering.py --no-aoti    # under a minute
    python bench/bench_lowering.py --quick      # the first module that exports, the first target (CI)
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MODELS = {
    "bert.py": """
        import torch
        from transformers import BertConfig, BertModel


        class TinyBert(torch.nn.Module):
            def __init__(self):
                super().__init__()
                config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                    intermediate_size=64)
                self.bert = BertModel(config)

            def forward(self, input_ids, attention_mask):
                return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    """,
    "llama.py": """
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM


        class TinyLlama(torch.nn.Module):
            def __init__(self):
                super().__init__()
                config = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=2, num_key_value_heads=1, use_cache=False)
                self.llama = LlamaForCausalLM(config)

            def forward(self, input_ids):
                return self.llama(input_ids=input_ids).logits
    """,
    "vit.py": """
        import torch
        from transformers import ViTConfig, ViTModel


        class TinyVit(torch.nn.Module):
            def __init__(self):
                super().__init__()
                config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=64)
                self.vit = ViTModel(config)

            def forward(self, pixel_values):
                return self.vit(pixel_values=pixel_values).last_hidden_state
    """,
}

SPECS = """
[tool.exportlens.modules."models/bert.py:TinyBert"]
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 }, attention_mask = { shape = \
"i64[batch, seq]", fill = "ones" } }
dims = { batch = { min = 1, max = 8, example = 3 }, seq = { min = 2, max = 64, example = 12 } }

[tool.exportlens.modules."models/llama.py:TinyLlama"]
inputs = { input_ids = { shape = "i64[batch, seq]", low = 0, high = 100 } }
dims = { batch = { min = 1, max = 8, example = 3 }, seq = { min = 2, max = 64, example = 12 } }

[tool.exportlens.modules."models/vit.py:TinyVit"]
inputs = { pixel_values = "f32[batch, 3, 32, 32]" }
dims = { batch = { min = 1, max = 8, example = 3 } }
"""


def project(folder: Path) -> Path:
    root = folder / "project"
    shutil.copytree(REPO / "examples", root)
    for name, source in MODELS.items():
        (root / "models" / name).write_text(textwrap.dedent(source).lstrip())
    with (root / "pyproject.toml").open("a") as f:
        f.write(SPECS)
    return root


def targets(aoti: bool) -> list[str]:
    out = ["onnx"] if importlib.util.find_spec("onnxruntime") else []
    out += ["aoti"] if aoti else []
    out += ["executorch"] if importlib.util.find_spec("executorch") else []
    return out


def bench(root: Path, names: list[str], modules: int | None = None) -> None:
    import torch

    from exportlens.exporter.core.settings import Overrides, effective
    from exportlens.exporter.core.sources import Sources
    from exportlens.exporter.runtime.lowering.compiled import COMPILE
    from exportlens.exporter.runtime.run import prepare, quiet
    from exportlens.exporter.spec.plan import make_plan

    plan = make_plan([root])
    files = Sources.of(root, None)
    print(f"{'module':<38} {'export':>8}  " + "  ".join(f"{t + ' (×export)':>24} {'size':>9}" for t in names))
    for planned in plan.modules:
        if planned.spec is None:
            continue
        strict = effective(planned.spec.settings, Overrides()).strict
        try:
            _, model, built = prepare(root, planned.module, planned.spec, "cpu", files)
            started = time.perf_counter()
            with quiet():
                ep = torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes,
                                         strict=strict)  # fmt: skip
            exported = time.perf_counter() - started
        except Exception as exc:
            print(f"{planned.target:<38} does not export ({type(exc).__name__}): not lowered")
            continue
        row = f"{planned.target:<38} {exported:>7.2f}s  "
        for target in names:
            folder = Path(tempfile.mkdtemp(prefix=f"{target}-"))
            started = time.perf_counter()
            try:
                size = COMPILE[target](ep, folder).size
                seconds = time.perf_counter() - started
                row += f"{seconds:>9.2f}s ({seconds / exported:>6.1f}×)      {size / 1024:>7.1f}KB  "
            except Exception as exc:
                row += f"{'failed: ' + type(exc).__name__:>24} {'':>9}  "
        print(row, flush=True)
        modules = None if modules is None else modules - 1
        if modules == 0:
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-aoti", action="store_true", help="leave out AOTInductor (about 30 s per module)")
    parser.add_argument(
        "--quick", action="store_true", help="the first module that exports, the first target only (CI)"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as folder:
        names = targets(not (args.no_aoti or args.quick))
        bench(project(Path(folder)), names[:1] if args.quick else names, 1 if args.quick else None)


if __name__ == "__main__":
    main()
