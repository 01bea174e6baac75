"""How much longer does exportlens take to give its verdict than a bare torch.export.export?

One process, one run. For each module: build the model, inputs and
dynamic_shapes once the way exportlens does, warm up, then time, interleaved
(in an order shuffled per round, so neither side always runs first):

- torch.export: ``torch.export.export(model, args, kwargs, dynamic_shapes=..., strict=...)``
  on that one prebuilt model and its inputs;
- exportlens: ``exportlens.exporter.runtime.run.export_module`` from the module's spec
  to its verdict (``Task.VERDICT``, what the editor shows first) — importing the user's file afresh, constructing the
  model, building the inputs, exporting while recording guards, and
  describing the program in the user's names (signature, ranges, per-line
  shapes). ``collect_all`` is irrelevant: both modules export.

Beside them, untimed against the goal, the same call with ``Task.SERVE``: the verdict and then
the program run at the example inputs and at every corner of the spec's ranges, the job the
editor sends after the verdict is shown.

Prints p50 / p95 of wall time for each and the ratio of the p50s (goal: ≤ 1.10);
beside it the ratio of the fastest runs and of the median CPU times, which
other processes on the machine disturb less; then where exportlens's time
goes (a few extra, separately timed passes).

    python bench/bench_export.py [--reps 30] [--warmup 3] [--seed 0]
    python bench/bench_export.py --quick   # 1 run of each, no warm-up: that it runs (CI), not its figures
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import torch

from exportlens.exporter.core.options import Task
from exportlens.exporter.core.report import Status
from exportlens.exporter.core.sources import Sources
from exportlens.exporter.runtime import run
from exportlens.exporter.runtime.construct import construct
from exportlens.exporter.runtime.in_process import export_planned
from exportlens.exporter.runtime.locate import record_guards
from exportlens.exporter.runtime.naming.explain import Context
from exportlens.exporter.runtime.naming.summary import summarize
from exportlens.exporter.spec.plan import Plan, Planned, make_plan

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

MLP = """
import torch
from torch import nn
from torch.export import Dim


class MLP(nn.Module):
    def __init__(self, features: int = 64, hidden: int = 256, classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), \
nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x).softmax(dim=-1)

    @staticmethod
    def example_inputs():
        return (torch.randn(8, 64),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {0: Dim("batch", min=1, max=1024)}}
"""


def planned(paths: list[Path], target: str) -> tuple[Plan, Planned]:
    plan = make_plan(paths)
    hits = [p for p in plan.modules if p.target == target]
    if not hits or hits[0].spec is None:
        sys.exit(f"bench: {target} not found with a spec in {paths}")
    return plan, hits[0]


def bare_export(plan: Plan, item: Planned) -> Callable[[], object]:
    """torch.export.export on the module and inputs exportlens builds from the same spec."""
    files = Sources.of(plan.root)
    spec = item.spec
    _cls, model, built = run.prepare(plan.root, item.module, spec, spec.settings.device, files)
    strict = spec.settings.strict

    def call() -> object:
        return torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=strict)

    return call


def exportlens_verdict(plan: Plan, item: Planned, task: Task = Task.VERDICT) -> Callable[[], object]:
    """The editor's verdict (``Task.VERDICT``), or with ``Task.SERVE`` the verdict and then the
    program run at the example inputs and the spec's bounds, the second job the editor sends."""
    options = run.Options(collect_all=False)

    def call() -> object:
        report = run.export_module(plan.root, item.module, item.spec, options, task=task)
        if report.status is not Status.EXPORTED:
            raise SystemExit(f"bench: {item.target} did not export: {[str(f) for f in report.findings]}")
        return report

    return call


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call; CPU time (all threads) is less disturbed by other processes."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100])."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def stages(plan: Plan, item: Planned, passes: int = 5) -> dict[str, float]:
    """export_module's stages, each timed (same calls, in the same order): the median of a few passes."""
    runs = [_stages(plan, item) for _ in range(passes)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def _stages(plan: Plan, item: Planned) -> dict[str, float]:
    root, module, spec = plan.root.resolve(), item.module, item.spec
    files = Sources.of(root)
    device = spec.settings.device
    out: dict[str, float] = {}
    t = time.perf_counter()
    cls = run._load_class(root, module, files)
    out["import file"] = time.perf_counter() - t
    t = time.perf_counter()
    model = construct(cls, module, spec, device, files)
    out["construct"] = time.perf_counter() - t
    t = time.perf_counter()
    built = run._build_inputs(cls, module, spec, device, files)
    out["inputs"] = time.perf_counter() - t
    t = time.perf_counter()
    with getattr(run, "quiet", contextlib.nullcontext)(), record_guards(files) as log:
        ep = torch.export.export(
            model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=spec.settings.strict
        )
    out["export (recording guards)"] = time.perf_counter() - t
    t = time.perf_counter()
    summarize(ep, Context(root, module, spec, built, sources=files, model=model), log, None)
    out["summary"] = time.perf_counter() - t
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=30, help="timed runs of each (default 30, at least 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each first (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the interleaving order")
    parser.add_argument("--quick", action="store_true", help="1 run of each, no warm-up, 1 pass of stages (CI)")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.warmup = 1, 0
    elif args.reps < 20:
        parser.error("--reps must be at least 20")
    rng = random.Random(args.seed)
    load_before = _load()

    with tempfile.TemporaryDirectory(prefix="exportlens-bench-") as tmp:
        mlp_root = Path(tmp)
        (mlp_root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n', encoding="utf-8")
        (mlp_root / "mlp.py").write_text(textwrap.dedent(MLP).lstrip(), encoding="utf-8")
        cases = [
            (
                "TinyEncoder",
                "pyproject.toml",
                *planned([EXAMPLES / "models" / "encoder.py"], "models/encoder.py:TinyEncoder"),
            ),
            ("MLP", "example_inputs()", *planned([mlp_root / "mlp.py"], "mlp.py:MLP")),
        ]

        rows = []
        breakdowns = []
        for label, source, plan, item in cases:
            verdict = export_planned(
                plan, item, run.Options(collect_all=False)
            )  # the verdict, as `exportlens check` gives it
            if verdict.status is not Status.EXPORTED:
                sys.exit(f"bench: {item.target} did not export: {[str(f) for f in verdict.findings]}")
            sides = {
                "torch.export": bare_export(plan, item),
                "exportlens": exportlens_verdict(plan, item),
                "serving": exportlens_verdict(plan, item, Task.SERVE),
            }
            for _ in range(args.warmup):
                for fn in sides.values():
                    fn()
            times: dict[str, list[float]] = {name: [] for name in sides}
            cpu: dict[str, list[float]] = {name: [] for name in sides}
            for _ in range(args.reps):
                order = list(sides)
                rng.shuffle(order)
                for name in order:
                    w, c = timed(sides[name])
                    times[name].append(w)
                    cpu[name].append(c)
            bare, lens = times["torch.export"], times["exportlens"]
            cpu_ratio = statistics.median(cpu["exportlens"]) / statistics.median(cpu["torch.export"])
            serving = statistics.median(times["serving"])
            rows.append((label, source, verdict.summary.signature, bare, lens, cpu_ratio, serving))
            breakdowns.append((label, stages(plan, item, passes=1 if args.quick else 5)))

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs,"
        f" python {sys.version.split()[0]}; "
        f"{args.reps} timed runs each after {args.warmup} warm-up, interleaved (shuffled per round)"
    )
    print(
        f"load average before / after: {load_before} / {_load()}  (other processes on these cores inflate wall times)"
    )
    print()
    header = (
        f"{'module':<12} {'spec':<17} {'torch.export p50':>17} {'p95':>9} {'exportlens p50':>15} {'p95':>9}"
        f" {'ratio p50':>10} {'ratio min':>10} {'ratio CPU p50':>14} {'+ serving run p50':>18}"
    )
    print(header)
    print("-" * len(header))
    worst = 0.0
    for label, source, _, bare, lens, cpu_ratio, serving in rows:
        ratio = statistics.median(lens) / statistics.median(bare)
        worst = max(worst, ratio)
        print(
            f"{label:<12} {source:<17} {_ms(statistics.median(bare)):>17} {_ms(pct(bare, 95)):>9} "
            f"{_ms(statistics.median(lens)):>15} {_ms(pct(lens, 95)):>9} "
            f"{ratio:>9.3f}x {min(lens) / min(bare):>9.3f}x {cpu_ratio:>13.3f}x {_ms(serving):>18}"
        )
    print()
    for label, _source, signature, *_ in rows:
        print(f"{label}: {signature}")
    print()
    print(f"where exportlens's time goes (median of {1 if args.quick else 5} passes, ms):")
    names = list(breakdowns[0][1])
    print(f"{'module':<12} " + " ".join(f"{n:>26}" for n in names))
    for label, parts in breakdowns:
        print(f"{label:<12} " + " ".join(f"{parts[n] * 1000:>26.1f}" for n in names))
    print()
    print(
        f"goal: exportlens p50 / torch.export p50 <= 1.10 -> {'met' if worst <= 1.10 else 'NOT met'}"
        f" (worst {worst:.3f}x)"
    )
    return 0


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


if __name__ == "__main__":
    raise SystemExit(main())
