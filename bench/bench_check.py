"""`exportlens check --no-cache` as a user runs it, beside a fresh python's plain export loop (issue 40).

Two projects, each checked from spawn to exit, alternating with its baseline in one run:

- **examples**: a copy of ``examples/`` (5 modules, four of which fail), checked in full
  (draft export, the bounds run, proofs) and ``--first-only`` (verdicts only);
- **10 exporting**: a generated project of ``--modules`` (10) small modules that all export,
  ``--first-only``.

The baseline is a fresh ``python`` that imports torch and exports each module of the project
with ``torch.export.export`` (no draft export after a failure): the time from its spawn to its
exit, less what it spent reading the specs with exportlens (planning with libcst, and importing
exportlens's input builder), which a hand-written loop would not. Goals (issue 40): verdicts only,
examples ≤ 1.1× and 10 exporting modules ≤ 1.05×.

    python bench/bench_check.py            # 3 runs of each: about 1-2 minutes on 2 cores
    python bench/bench_check.py --reps 5
    python bench/bench_check.py --quick    # 1 run, 2 generated modules (CI: the bench still runs)
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXPORTLENS = [sys.executable, "-m", "exportlens.cli", "check", ".", "--no-cache", "--format", "json"]

# the baseline: torch and each module's export; the spec reading (exportlens's) is timed apart
PLAIN = """
import sys, time, json
t0 = time.perf_counter()
from pathlib import Path
from exportlens.exporter.spec.plan import make_plan
plan = make_plan([Path(".")])
spent = time.perf_counter() - t0
import torch, torch.export, torch._dynamo
t1 = time.perf_counter()
from exportlens.exporter.runtime.run import prepare
spent += time.perf_counter() - t1
for planned in plan.modules:
    if planned.spec is None:
        continue
    _, model, built = prepare(plan.root, planned.module, planned.spec, "cpu", plan.sources)
    try:
        torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=False)
    except Exception:
        pass
print(json.dumps({"exportlens_s": spent}))
"""

GOOD = """\
import torch
from torch import nn


class Block{i}(nn.Module):
    def __init__(self, hidden: int = {hidden}):
        super().__init__()
        self.up = nn.Linear(16, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.down = nn.Linear(hidden, {out})

    def forward(self, x):
        h = torch.relu(self.up(x))
        return self.down(self.norm(h)).softmax(dim=-1)
"""

TABLE = """
[tool.exportlens.modules."mods/m{i}.py:Block{i}"]
inputs = {{ x = "f32[batch, seq, 16]" }}
dims = {{ batch = {{ min = 1, max = 64 }}, seq = {{ min = 2, max = 256 }} }}
"""


def generated(root: Path, count: int) -> Path:
    (root / "mods").mkdir(parents=True)
    tables = ['[project]\nname = "bench-check"\nversion = "0"\n']
    for i in range(count):
        (root / "mods" / f"m{i}.py").write_text(GOOD.format(i=i, hidden=16 + 8 * i, out=4 + i))
        tables.append(TABLE.format(i=i))
    (root / "pyproject.toml").write_text("".join(tables))
    return root


def timed(command: list[str], root: Path, codes: tuple[int, ...]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - start
    if done.returncode not in codes:
        raise SystemExit(f"bench: {' '.join(command[:4])} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def check(root: Path, first_only: bool) -> float:
    seconds, out = timed(EXPORTLENS + ["--first-only"] * first_only, root, (0, 1))
    if not json.loads(out)["modules"]:
        raise SystemExit(f"bench: exportlens checked nothing in {root}")
    return seconds


def plain(root: Path) -> float:
    seconds, out = timed([sys.executable, "-c", PLAIN], root, (0,))
    return seconds - json.loads(out.strip().splitlines()[-1])["exportlens_s"]


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def figure(name: str, ours: list[float], base: list[float], goal: float | None) -> tuple[str, str, str]:
    ratios = sorted(o / b for o, b in zip(ours, base))
    spread = f"{ratios[0]:.2f} / {statistics.median(ratios):.2f} / {ratios[-1]:.2f}"
    line = (
        f"{name:<44} {statistics.median(ours):6.2f} s   {statistics.median(base):6.2f} s   {spread:<20}"
        f" {'—' if goal is None else f'≤ {goal}'}"
    )
    met = "—" if goal is None else "yes" if statistics.median(ratios) <= goal else "NO"
    return line, f"{statistics.median(ratios):.2f}×", met


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3, help="runs of each, alternating with the baseline (default 3)")
    p.add_argument("--modules", type=int, default=10, help="generated modules that export (default 10)")
    p.add_argument("--quick", action="store_true", help="1 run, 2 generated modules (CI: no figure judged)")
    args = p.parse_args()
    if args.quick:
        args.reps, args.modules = 1, 2
    with tempfile.TemporaryDirectory(prefix="exportlens-bench-check-") as tmp:
        examples = Path(tmp) / "examples"
        shutil.copytree(REPO / "examples", examples, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
        many = generated(Path(tmp) / "many", args.modules)
        plain(examples)  # the first start also fills the OS's file cache
        rows = {"examples": [], "examples first": [], "examples plain": [], "many": [], "many plain": []}
        print(f"load average before: {load()}")
        for rep in range(args.reps):
            runs = [
                ("examples plain", lambda: plain(examples)),
                ("examples", lambda: check(examples, False)),
                ("examples first", lambda: check(examples, True)),
                ("many plain", lambda: plain(many)),
                ("many", lambda: check(many, True)),
            ]
            for name, run in runs if rep % 2 == 0 else runs[::-1]:
                rows[name].append(run())
        print(f"load average after: {load()}\n")
    print(f"{'':<44} {'exportlens':>8}   {'baseline':>8}   ratio min / median / max   goal")
    lines = [
        figure("check examples/ (full: proofs, bounds)", rows["examples"], rows["examples plain"], None),
        figure("check examples/ --first-only", rows["examples first"], rows["examples plain"], 1.1),
        figure(f"check {args.modules} exporting modules --first-only", rows["many"], rows["many plain"], 1.05),
    ]
    for line, _, _ in lines:
        print(line)
    print(f"\n(medians of {args.reps}; baseline: a fresh python's import torch + a plain torch.export loop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
