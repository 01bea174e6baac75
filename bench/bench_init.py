"""From a model with no spec to a verdict: ``exportlens init`` against plain torch.export.

For each model of a new user's project (tests/data/new_project: a KV-cache decoder block
with ``start_pos: int``, a top-2 MoE layer, a ViT that interpolates its position
embeddings), in a fresh copy holding only that model's file and no pyproject.toml:

- **exportlens init**: ``exportlens init --no-cache`` as a user runs it: read the code,
  guess the spec, export each guess in a worker until one runs (a verdict), write it.
  Wall time from spawn to exit: the workers' start and ``import torch`` included.
- **plain torch**: a fresh ``python3`` that imports torch and the model's file,
  constructs it, builds the inputs and ``Dim``s that init wrote, and runs
  ``torch.export.export`` once (it raises where the model has a real export problem).
  Wall time from spawn to exit.

The same run, alternating, ``--reps`` times (median). Goal (issue 24): init ≤ 10 s per
model on 2 cores.

    python bench/bench_init.py            # about 1 minute on 2 cores
    python bench/bench_init.py --reps 3
    python bench/bench_init.py --quick    # the first model only: that it runs (CI)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "tests/data/new_project"
GOAL = 10.0

# what init writes for each (tests/test_init.py holds it), as plain torch is called
PLAIN = {
    "decoder.py": (
        "DecoderBlock",
        "(torch.randn(2, 8, 64), 3)",
        "({0: Dim('batch', min=1, max=4), 1: Dim('seq', min=2, max=32)}, Dim.DYNAMIC(min=0, max=31))",
    ),
    "moe.py": ("MoE", "(torch.randn(2, 8, 32),)", "({0: Dim('batch', min=1, max=64), 1: Dim('seq', min=2, max=512)},)"),
    "vit.py": ("ViT", "(torch.randn(2, 3, 32, 32),)", "({0: Dim('batch', min=1, max=64)},)"),
}
PLAIN_SCRIPT = """
import sys, torch
from torch.export import Dim
sys.path.insert(0, "models")
from {module} import {cls}
try:
    torch.export.export({cls}(), {args}, dynamic_shapes={dims})
    print("exported")
except Exception as e:
    print("failed:", type(e).__name__)
"""


def copy_of(file: str, into: Path) -> Path:
    root = into / file.removesuffix(".py")
    (root / "models").mkdir(parents=True)
    shutil.copy(PROJECT / "models" / file, root / "models" / file)
    (root / ".git").mkdir()
    return root


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - start, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[
        -200:
    ]


def one(file: str, reps: int) -> tuple[float, float, str, str]:
    cls, args, dims = PLAIN[file]
    script = PLAIN_SCRIPT.format(module=file.removesuffix(".py"), cls=cls, args=args, dims=dims)
    inits, plains, said, plain_said = [], [], "", ""
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_of(file, Path(tmp))
            seconds, out = timed([sys.executable, "-m", "exportlens.cli", "init", "--no-cache"], root)
            inits.append(seconds)
            said = next(
                (line for line in (root / "pyproject.toml").read_text().splitlines() if "checked:" in line), out
            )
            seconds, plain_said = timed([sys.executable, "-c", script], root)
            plains.append(seconds)
    return statistics.median(inits), statistics.median(plains), said.split("checked: ")[-1], plain_said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="the first model only, 1 run (CI)")
    args = parser.parse_args()
    print(f"{'model':<14} {'init (s)':>9} {'torch (s)':>10} {'ratio':>6}  goal  verdict")
    for file in list(PLAIN)[:1] if args.quick else PLAIN:
        init, plain, said, plain_said = one(file, 1 if args.quick else args.reps)
        ok = "ok" if init <= GOAL else "SLOW"
        print(
            f"{PLAIN[file][0]:<14} {init:>9.1f} {plain:>10.1f} {init / plain:>6.2f}  {ok:<4}  {said}"
            f"  (torch: {plain_said})"
        )


if __name__ == "__main__":
    main()
