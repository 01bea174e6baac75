"""Real repositories (issue 35): `exportlens init` then `exportlens check` on the corpus in
``tests/repos/``, beside a plain torch.export loop of the same specs, in one run.

Each project of the corpus is a folder the way a user has one: model files that build a real
model from an installed package and its config (transformers; no weights are downloaded),
no ``pyproject.toml`` unless the user's own spec is the problem, and an ``expected.toml``
beside it: per module, whether it exports, the problems a user should be shown (file, line,
code), and whether a remedy is known. Per project, in a copy:

1. ``exportlens init`` where the project has no pyproject.toml: its spec *runs* where init
   says it exports or runs and fails on an export problem (not "no guess runs");
2. ``exportlens check --format json --no-cache``, timed from spawn to exit, as a user runs it;
3. the plain loop: a fresh ``python`` that imports torch, builds each module and its inputs
   from the same spec, and runs ``torch.export.export`` (``draft_export`` after a failure),
   timed the same way;
4. each failing module's preferred fix applied, and ``exportlens check`` again: the fix holds
   where the module then exports with no finding (the check runs the program at the corners
   of the declared ranges against eager).

Printed: init specs that run; first finding on the culprit line; problems found; failing
modules with a known remedy whose preferred fix holds; fixes said to serve their ranges that
do; check time ÷ the plain loop (sum over projects). Goals (issue 35): ≥ 90 %, ≥ 95 %,
≥ 95 %, ≥ 80 %, 100 %, ≤ 1.2×.

    python bench/bench_repos.py            # the whole corpus: several minutes on 2 cores
    python bench/bench_repos.py --quick    # two projects (CI: the bench still runs)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import tomlkit

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "repos"
EXPORTLENS = [sys.executable, "-m", "exportlens.cli"]
QUICK = ("gpt2_lm", "bert_classifier")
SERVES = "(module then exports and serves its ranges)"

# the plain loop: the spec's module and inputs built as exportlens builds them, then torch alone
PLAIN = """
import sys
from pathlib import Path
import torch
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.runtime.run import prepare
plan = make_plan([Path(sys.argv[1])])
for planned in plan.modules:
    if planned.spec is None:
        continue
    try:
        _, model, built = prepare(plan.root, planned.module, planned.spec, "cpu", plan.sources)
    except Exception:
        continue
    try:
        torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes)
    except Exception:
        try:
            torch.export.draft_export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes)
        except Exception:
            pass
"""


@dataclass
class Tally:
    init_built: int = 0
    init_runs: int = 0
    failing: int = 0
    first_on_line: int = 0
    problems: int = 0
    found: int = 0
    with_remedy: int = 0
    remedy_holds: int = 0
    said_serving: int = 0
    serving_holds: int = 0
    check_s: float = 0.0
    plain_s: float = 0.0
    misses: list[str] = field(default_factory=list)


def run(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
    return done, time.perf_counter() - start


def check(root: Path) -> tuple[dict[str, dict], float]:
    done, seconds = run([*EXPORTLENS, "check", ".", "--no-cache", "--format", "json"], root)
    if done.returncode not in (0, 1):
        raise SystemExit(f"exportlens check failed in {root}:\n{done.stderr[-2000:]}")
    return {m["target"]: m for m in json.loads(done.stdout)["modules"]}, seconds


def apply(root: Path, fix: dict) -> None:
    """The fix's edits (1-based lines and columns, the end exclusive), the last first."""
    by_path: dict[str, list[dict]] = {}
    for edit in fix["edits"]:
        by_path.setdefault(edit["path"], []).append(edit)
    for path, edits in by_path.items():
        file = root / path
        lines = file.read_text(encoding="utf-8").splitlines(keepends=True) if file.exists() else []
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        text = "".join(lines)

        def offset(line: int, column: int, starts: list[int] = starts) -> int:
            return starts[min(line - 1, len(starts) - 1)] + column - 1

        for e in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
            a, b = offset(e["line"], e["column"]), offset(e["end_line"], e["end_column"])
            text = text[:a] + e["new_text"] + text[b:]
        file.write_text(text, encoding="utf-8")


def project(name: str, scratch: Path, tally: Tally) -> None:
    root = scratch / name
    shutil.copytree(CORPUS / name, root, ignore=shutil.ignore_patterns("expected.toml", "__pycache__"))
    (root / ".git").mkdir()  # the project's root, as a clone has
    expected = tomlkit.parse((CORPUS / name / "expected.toml").read_text(encoding="utf-8")).unwrap()["modules"]
    if not (root / "pyproject.toml").exists():
        done, _ = run([*EXPORTLENS, "init", "."], root)
        for target in expected:
            tally.init_built += 1
            said = next((line for line in done.stdout.splitlines() if line.startswith(f"{target}:")), "")
            if "wrote a spec; exports" in said or "wrote a spec; runs" in said:
                tally.init_runs += 1
            else:
                tally.misses.append(f"{name}: init: {said or done.stderr.strip()[-200:]}")
    modules, seconds = check(root)
    tally.check_s += seconds
    tally.plain_s += run([sys.executable, "-c", PLAIN, str(root)], root)[1]
    for target, want in expected.items():
        _judge(name, root, target, want, modules.get(target), tally)


def _judge(name: str, root: Path, target: str, want: dict, got: dict | None, tally: Tally) -> None:
    if got is None:
        tally.misses.append(f"{name}: {target} was not checked")
        return
    if "known_miss" in want:
        tally.misses.append(f"{name}: {target}: known miss: {want['known_miss']}")
    if want["exports"]:
        if got["status"] != "exported" or got["findings"]:
            tally.misses.append(f"{name}: {target} should export, said {got['status']}")
        return
    tally.failing += 1
    findings = got["findings"]
    problems = want.get("problems", [])
    tally.problems += len(problems)
    at = {(f["path"], f["line"], f["code"]) for f in findings}
    tally.found += sum((p["path"], p["line"], p["code"]) in at for p in problems)
    first = findings[0] if findings else None
    if first and problems and (first["path"], first["line"]) == (problems[0]["path"], problems[0]["line"]):
        tally.first_on_line += 1
    else:
        where = f"{first['path']}:{first['line']} {first['code']}" if first else "no finding"
        tally.misses.append(f"{name}: {target}: first finding {where}, culprit {problems[:1]}")
    preferred = next((f for f in findings[0]["fixes"] if f["preferred"]), None) if findings else None
    if want.get("remedy"):
        tally.with_remedy += 1
    if preferred is None:
        if want.get("remedy"):
            tally.misses.append(f"{name}: {target}: no preferred fix where a remedy is known")
        return
    holds = _holds(root, target, preferred)
    tally.remedy_holds += holds and bool(want.get("remedy"))
    if SERVES in preferred["title"]:
        tally.said_serving += 1
        tally.serving_holds += holds
    if not holds:
        tally.misses.append(f"{name}: {target}: preferred fix does not hold: {preferred['title']}")


def _holds(root: Path, target: str, fix: dict) -> bool:
    fixed = root.with_name(root.name + "-fixed")
    shutil.copytree(root, fixed)
    apply(fixed, fix)
    modules, _ = check(fixed)
    got = modules.get(target)
    return got is not None and got["status"] == "exported" and not got["findings"]


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} % ({part}/{whole})" if whole else "  n/a"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (CI)")
    p.add_argument("--project", action="append", default=[], help="only this project of tests/repos (repeatable)")
    args = p.parse_args()
    names = list(QUICK) if args.quick else args.project or sorted(d.name for d in CORPUS.iterdir() if d.is_dir())
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="exportlens-bench-repos-") as tmp:
        for name in names:
            print(f"  {name}", flush=True)
            project(name, Path(tmp), tally)
    t = tally
    ratio = t.check_s / t.plain_s if t.plain_s else float("inf")
    print(f"\n{len(names)} projects of tests/repos, {t.failing} failing modules\n")
    rows = [
        ("init specs that run", pct(t.init_runs, t.init_built), "≥ 90 %"),
        ("first finding on the culprit line", pct(t.first_on_line, t.failing), "≥ 95 %"),
        ("problems found", pct(t.found, t.problems), "≥ 95 %"),
        ("known remedy: preferred fix holds", pct(t.remedy_holds, t.with_remedy), "≥ 80 %"),
        ("'serves its ranges' fixes that hold", pct(t.serving_holds, t.said_serving), "100 %"),
        ("check ÷ plain torch.export loop", f"{ratio:.2f}× ({t.check_s:.1f} s / {t.plain_s:.1f} s)", "≤ 1.2×"),
    ]
    for what, measured, goal in rows:
        print(f"{what:<38} {measured:<28} goal {goal}")
    if t.misses:
        print("\nmisses:")
        print("\n".join(f"  {m}" for m in t.misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
