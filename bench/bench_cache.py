"""A second ``exportlens check`` of an unchanged project, against the first, in one run.

Copies ``examples/`` to a temporary folder, then runs ``exportlens check`` on it as a
user does (a fresh process each time): once cold (no ``.exportlens/cache`` yet), then
``--reps`` more times unchanged. Exports run under a ``python`` that notes each worker
start, so the table says whether any later run started a worker (and so imported
torch). Goal: the median later run ≤ 0.1× the first, with no worker started.

    python bench/bench_cache.py            # 5 later runs
    python bench/bench_cache.py --reps 10
    python bench/bench_cache.py --quick    # 1 later run: that it runs (CI), not its figures
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1 later run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.reps = 1
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        shutil.copytree(EXAMPLES, here / "examples", ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
        log = here / "workers.log"
        python = here / "python"  # notes each start, then is the real interpreter
        python.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)

        def run() -> tuple[float, int, str]:
            before = log.read_text().count("exportlens") if log.exists() else 0
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "exportlens.cli", "check", "examples", "--python", str(python)],
                cwd=here,
                capture_output=True,
                text=True,
            )
            seconds = time.perf_counter() - start
            started = (log.read_text().count("exportlens") if log.exists() else 0) - before
            return seconds, started, done.stdout.strip().splitlines()[-1]

        first = run()
        later = [run() for _ in range(args.reps)]
    median = statistics.median(s for s, _, _ in later)
    print(f"{'run':<22}{'seconds':>9}{'workers':>9}  summary")
    print(f"{'first (cold)':<22}{first[0]:>9.2f}{first[1]:>9}  {first[2]}")
    for i, (seconds, started, summary) in enumerate(later, 1):
        print(f"{f'later #{i} (unchanged)':<22}{seconds:>9.2f}{started:>9}  {summary}")
    print(f"\nlater / first: {median / first[0]:.3f}× (median of {len(later)}; goal ≤ 0.1×)")
    print(f"workers started by the later runs: {sum(s for _, s, _ in later)} (goal 0: torch never imported)")


if __name__ == "__main__":
    main()
