"""What does isolation cost? One module's verdict three ways, in one run.

- cold: a fresh ``python -c`` that imports torch and exportlens, plans the
  module and exports it (what a tool without warm workers pays per check);
- warm pool: ``Pool.run`` with the cache off (``key=""``): a job sent to the warm
  parent, run in a fresh forked child, its report back as JSON — what the LSP
  server and ``exportlens check`` pay per module;
- in-process: ``exportlens.exporter.runtime.run.export_module`` in this process after
  warm-up (no isolation at all: the floor).

p50 and p95 of wall time per verdict, and the ratios the goals are on: warm
pool p50 ≤ 1.3 × in-process p50, and cold p50 ≥ 5 × warm pool p50. Warm-pool
and in-process runs alternate, so drift on the machine hits both alike; a
``gc.collect()`` precedes every timed call. Warm-pool jobs are ``--gap``
seconds apart, as saves are; a second warm-pool row sends them back to back.

Then the whole CLI: ``exportlens check examples/`` with ``--jobs 1`` and
``--jobs 2``, alternating, ``--cli-runs`` times each (0 skips it).

    python bench/bench_workers.py [--reps 30] [--cold-reps 20] [--gap 0.5] [--cli-runs 5]
    python bench/bench_workers.py --quick   # 1 run of each, 1 CLI run per --jobs: that it runs (CI)
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import torch

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import Status
from exportlens.exporter.runtime import run
from exportlens.exporter.spec.plan import Plan, Planned, make_plan
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.pool import Pool

REPO = Path(__file__).resolve().parent.parent

MLP = """
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, features: int = 64, hidden: int = 256, classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), \
nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x).softmax(dim=-1)
"""

PYPROJECT = """
[project]
name = "bench"
version = "0"

[tool.exportlens.modules."mlp.py:MLP"]
inputs = { x = "f32[batch, 64]" }
dims = { batch = { max = 1024 } }
"""

# what a cold check does: start Python, import torch, plan and export one module
COLD = """
import sys
from pathlib import Path
from exportlens.exporter.runtime.in_process import export_planned
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.runtime.run import Options
plan = make_plan([Path(sys.argv[1])])
(item,) = plan.modules
assert export_planned(plan, item, Options(collect_all=False)).status.value == "exported"
"""


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100])."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def in_process(plan: Plan, item: Planned) -> Callable[[], object]:
    options = run.Options(collect_all=False)

    def call() -> object:
        report = run.export_module(plan.root, item.module, item.spec, options)
        assert report.status is Status.EXPORTED, report.findings
        return report

    return call


def warm_pool(pool: Pool, plan: Plan, item: Planned) -> Callable[[], object]:
    job = dataclasses.replace(job_for(plan, item, Options(collect_all=False)), key="")  # no cache

    def call() -> object:
        report = pool.run(job)
        assert report.status is Status.EXPORTED, report.findings
        return report

    return call


def cold(file: Path) -> Callable[[], object]:
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def call() -> object:
        return subprocess.run([sys.executable, "-c", COLD, str(file)], env=env, check=True, capture_output=True)

    return call


def cli_check(jobs: int) -> Callable[[], object]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", "examples", "--jobs", str(jobs)]

    def call() -> object:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True)
        assert done.returncode == 1, done.stderr  # the examples hold four failing modules
        return done

    return call


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reps", type=int, default=30, help="timed warm-pool and in-process runs (default 30, at least 20)"
    )
    parser.add_argument(
        "--cold-reps", type=int, default=20, help="timed cold runs (default 20, at least 20; each takes seconds)"
    )
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each first (default 3)")
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between warm-pool jobs (default 0.5)")
    parser.add_argument(
        "--cli-runs",
        type=int,
        default=5,
        help="runs of `exportlens check examples/` per --jobs value (default 5; 0: skip)",
    )
    parser.add_argument("--quick", action="store_true", help="1 run of each, no warm-up, 1 CLI run per --jobs (CI)")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.cold_reps, args.warmup, args.gap, args.cli_runs = 1, 1, 0, 0.1, 1
    elif args.reps < 20 or args.cold_reps < 20:
        parser.error("--reps and --cold-reps must be at least 20")
    load_before = _load()

    with tempfile.TemporaryDirectory(prefix="exportlens-bench-") as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT).lstrip(), encoding="utf-8")
        (root / "mlp.py").write_text(textwrap.dedent(MLP).lstrip(), encoding="utf-8")
        plan = make_plan([root / "mlp.py"])
        (item,) = plan.modules

        times: dict[str, list[float]] = {"in-process": [], "warm pool": [], "warm pool, back to back": [], "cold": []}
        with Pool(jobs=1) as pool:
            sides = {"in-process": in_process(plan, item), "warm pool": warm_pool(pool, plan, item)}
            for _ in range(args.warmup):
                for fn in sides.values():
                    fn()
                    time.sleep(args.gap)
            for i in range(args.reps):
                for name in ("in-process", "warm pool") if i % 2 else ("warm pool", "in-process"):
                    time.sleep(args.gap)  # the pool primes its next child meanwhile, as between saves
                    times[name].append(timed(sides[name]))
            time.sleep(args.gap)
            times["warm pool, back to back"] = [timed(sides["warm pool"]) for _ in range(args.reps)]

        run_cold = cold(root / "mlp.py")
        run_cold()  # the first start also fills the OS's file cache
        times["cold"] = [timed(run_cold) for _ in range(args.cold_reps)]

    checks: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.cli_runs):
        for jobs in checks:
            checks[jobs].append(timed(cli_check(jobs)))

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs,"
        f" python {sys.version.split()[0]}; "
        f"module mlp.py:MLP (3 linear layers, dynamic batch); load average {load_before} before, {_load()} after"
    )
    print(f"{'':26} {'runs':>5} {'p50':>9} {'p95':>9} {'min':>9}")
    for name, values in times.items():
        print(
            f"{name:26} {len(values):5d} {pct(values, 50) * 1000:7.1f}ms {pct(values, 95) * 1000:7.1f}ms"
            f" {min(values) * 1000:7.1f}ms"
        )
    inproc, warm, cold_p50 = (statistics.median(times[k]) for k in ("in-process", "warm pool", "cold"))
    isolation = warm / inproc
    speedup = cold_p50 / warm
    print(
        f"warm pool p50 / in-process p50 = {isolation:.2f} (goal <= 1.30): {'met' if isolation <= 1.3 else 'NOT met'}"
    )
    print(f"cold p50 / warm pool p50 = {speedup:.1f} (goal >= 5): {'met' if speedup >= 5 else 'NOT met'}")
    if args.cli_runs:
        one, two = (statistics.median(checks[j]) for j in (1, 2))
        runs = ", ".join(f"--jobs {j}: " + " ".join(f"{v:.2f}" for v in checks[j]) for j in checks)
        print(
            f"exportlens check examples/ (5 modules), median of {args.cli_runs}:"
            f" --jobs 1 {one:.2f} s, --jobs 2 {two:.2f} s, "
            f"ratio {two / one:.2f} ({runs})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
