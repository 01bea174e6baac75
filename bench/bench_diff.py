"""`exportlens diff --base HEAD examples` (issue 39) beside the two checks it compares.

In a copy of ``examples/`` committed to a fresh git repository, with no verdict cache:

1. the two checks a diff stands for, each cold: ``exportlens check --format json --no-cache``
   in the tree, and again in a second copy (the base's);
2. ``exportlens diff --base HEAD examples``, cold too: the base checked in a worktree of HEAD,
   its verdicts carried back, so the tree's side (unchanged) comes from the verdict cache.

Printed: what the diff says (no change: the examples against themselves), each time, and the
diff's time ÷ the two checks'. Goal (issue 39): ≤ 1.1×.

    python bench/bench_diff.py            # the five examples: about a minute on 2 cores
    python bench/bench_diff.py --quick    # one example module (CI: the bench still runs)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXPORTLENS = [sys.executable, "-m", "exportlens.cli"]
GIT = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench"]


def timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - start, done


def committed(folder: Path) -> Path:
    """A fresh repository holding a copy of examples/ (no cache of an earlier run)."""
    shutil.copytree(REPO / "examples", folder / "examples", ignore=shutil.ignore_patterns(".exportlens", "__pycache__"))
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "examples"]):
        subprocess.run([*GIT, *argv], cwd=folder, check=True, capture_output=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one example module, for CI")
    args = parser.parse_args()
    path = "examples/models/head.py" if args.quick else "examples"
    with tempfile.TemporaryDirectory() as scratch:
        tree, base = committed(Path(scratch) / "tree"), committed(Path(scratch) / "base")
        check = [*EXPORTLENS, "check", "--format", "json", "--no-cache", path]
        t_tree, done = timed(check, tree)
        t_base, _ = timed(check, base)
        if done.returncode not in (0, 1):
            print(f"check failed: {done.stderr.strip()}", file=sys.stderr)
            return 1
        t_diff, diffed = timed([*EXPORTLENS, "diff", "--base", "HEAD", path], tree)
    if diffed.returncode != 0:
        print(f"diff failed: {diffed.stderr.strip()}", file=sys.stderr)
        return 1
    print(f"exportlens diff --base HEAD {path}: {diffed.stdout.strip()}")
    print(f"  check (tree) {t_tree:.1f} s + check (base) {t_base:.1f} s = {t_tree + t_base:.1f} s")
    print(f"  diff {t_diff:.1f} s: {t_diff / (t_tree + t_base):.2f}x the two checks (goal: <= 1.1x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
