"""A 7-billion-parameter Llama (a transformers config, no weights) checked on ``meta``,
against a plain ``torch.export.export`` of the same model on ``meta``, in one run.

Copies ``tests/data/llama7b`` (the project ``tests/test_real_models.py`` checks): one
module, ``LlamaForCausalLM`` built from a Llama-2-7B-sized config (hidden 4096, 32
layers; 6.7 B parameters) and declared ``device = "meta"``, then runs ``exportlens check``
on it as a user does, with no cache, and a plain export of the same module in a fresh
interpreter. Each side's figures are its wall time and the peak resident memory of its
largest process (``RUSAGE_CHILDREN``: the worker's child, for exportlens). Goals (issue
12): ≤ 30 s and ≤ 1.5 GB for exportlens. On ``cpu`` the same weights would need about 27 GB.

    python bench/bench_meta.py
    python bench/bench_meta.py --quick   # 2 layers, not 32: that it runs (CI), not its figures
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "llama7b"
)  # the model and its spec, as the test checks them

PLAIN = """
import sys, time
import torch
sys.path.insert(0, sys.argv[1])
from llama7b import Llama7B
with torch.device("meta"):
    model = Llama7B().eval()
ids = torch.zeros(3, 16, dtype=torch.long, device="meta")
started = time.perf_counter()
batch, seq = torch.export.Dim("batch", max=8), torch.export.Dim("seq", min=2, max=4096)
torch.export.export(model, (ids,), dynamic_shapes={"input_ids": {0: batch, 1: seq}})
print(time.perf_counter() - started)
"""


def measured(cmd: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds, the largest descendant's peak RSS in GB, and the process's result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        print("(peak RSS: an earlier process was larger; run this bench on its own)", file=sys.stderr)
    return seconds, peak / 2**20, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 layers, not 32 (CI)")
    quick = parser.parse_args().quick
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(DATA, root, dirs_exist_ok=True)
        if quick:  # the same model and spec, a sixteenth of its layers
            model = root / "llama7b.py"
            model.write_text(model.read_text().replace("num_hidden_layers=32", "num_hidden_layers=2"))
        exportlens = str(Path(sys.executable).with_name("exportlens"))
        ours_s, ours_gb, done = measured([exportlens, "check", ".", "--no-cache", "--format", "json"], root)
        (module,) = json.loads(done.stdout)["modules"]
        plain_s, plain_gb, plain = measured([sys.executable, "-c", PLAIN, str(root)], root)
    if plain.returncode != 0:
        sys.exit(f"the plain export failed:\n{plain.stderr[-2000:]}")
    size = "2 layers (--quick)" if quick else "6.7 B parameters"
    print(f"Llama, {size}, on meta; exportlens says: {module['status']}\n")
    print("| | wall | peak RSS (largest process) | goal |")
    print("|---|---|---|---|")
    print(f"| plain torch.export (fresh interpreter, import included) | {plain_s:.1f} s | {plain_gb:.2f} GB | |")
    print(
        f"| `exportlens check` (CLI, worker, no cache) | {ours_s:.1f} s = {ours_s / plain_s:.2f}× | {ours_gb:.2f} GB"
        " | ≤ 30 s, ≤ 1.5 GB |"
    )
    met = module["status"] == "exported" and ours_s <= 30 and ours_gb <= 1.5
    print(f"\ngoal {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
