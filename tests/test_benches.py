"""Benches that never rot (issue 40): every ``bench/bench_*.py`` has a quick mode, and CI runs
each one in it, so a rename or a protocol change breaks CI instead of the bench."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCHES = sorted((REPO / "bench").glob("bench_*.py"))


def _options(path: Path) -> set[str]:
    """The option strings the script's argparse parsers declare."""
    return {
        arg.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"
        for arg in node.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }


def test_every_bench_has_a_quick_mode():
    assert BENCHES
    assert [p.name for p in BENCHES if "--quick" not in _options(p)] == []


def test_ci_runs_every_bench_quick():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    loop = 'for bench in bench/bench_*.py; do echo "ci: $bench --quick"; python3 "$bench" --quick'
    assert loop in ci
    # before the README's test command, which stays the last line
    assert ci.index(loop) < ci.rindex("python -m pytest")
    assert ci.rstrip().splitlines()[-1] == "python -m pytest"
