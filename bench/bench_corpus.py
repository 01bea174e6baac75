"""The failure corpus (tests/corpus/): how often exportlens is right, and what it costs
beside plain torch.export of the same modules, in one run.

Prints, over every case: the first finding on the expected line, its kind as expected,
negative controls clean, preferred fixes that make the module export (each applied to a
copy, as an editor would, and exported again). Then the time for the whole corpus:

- **torch.export**: a plain ``torch.export.export`` of each module on its example inputs
  and dynamic shapes, built once beforehand exactly as exportlens builds them;
- **exportlens, in one process**: ``check_plan`` of the corpus: every verdict with its
  findings, fixes, eager runs and serving checks (import, construct, build inputs included);
- **exportlens check** (the CLI): the same, as a user runs it, with its workers and no cache.

Also: fixes dropped because exportlens failed while building or proving them (each
report's ``fixes_dropped``), and texts shown with torch's symbols (corpus_cases.in_torch_words).

Goals (issue 11): line and kind each ≥ 95 %, every control clean, every promised fix exports.

    python bench/bench_corpus.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

import torch  # noqa: E402  (after the tests folder is on the path, for corpus_cases)
from corpus_cases import cases, check, copy_corpus, in_torch_words, judge  # noqa: E402

from exportlens.exporter.runtime.locate import ProjectFiles  # noqa: E402
from exportlens.exporter.runtime.run import prepare, quiet  # noqa: E402
from exportlens.exporter.static.plan import make_plan  # noqa: E402


def plain_export(root: Path) -> tuple[float, int]:
    """Seconds for torch.export.export of every module with a spec, inputs built first; and how many raised."""
    plan = make_plan([root])
    prepared = []
    for planned in plan.modules:
        spec = planned.spec
        if spec is None:
            continue
        try:
            _, model, built = prepare(root.resolve(), planned.module, spec, "cpu", ProjectFiles(root.resolve()))
        except Exception:
            continue  # a module whose inputs cannot be built: exportlens times it, torch cannot
        prepared.append((model, built, spec.settings.strict is True))
    failed, started = 0, time.perf_counter()
    for model, built, strict in prepared:
        try:
            with quiet():
                torch.export.export(model, built.args, built.kwargs, dynamic_shapes=built.dynamic_shapes, strict=strict)
        except Exception:
            failed += 1
    return time.perf_counter() - started, failed


def main() -> None:
    all_cases = cases()
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_corpus(Path(tmp) / "corpus")
        plain_export(root)  # warm torch's caches for both sides
        torch_s, raised = plain_export(root)
        started = time.perf_counter()
        reports = check(root)
        ours_s = time.perf_counter() - started
        started = time.perf_counter()
        cli = subprocess.run(
            [str(Path(sys.executable).with_name("exportlens")), "check", str(root), "--no-cache", "--format", "json"],
            capture_output=True,
            text=True,
        )
        cli_s = time.perf_counter() - started
        outcomes = [judge(c, reports[c.target], Path(tmp)) for c in all_cases]
        torch_words = [line for r in reports.values() for line in in_torch_words(r, root)]
        dropped = sum(r.fixes_dropped for r in reports.values())
        try:  # the CLI's count includes the proofs' (run in workers of their own)
            cli_dropped = str(sum(m.get("fixes_dropped", 0) for m in json.loads(cli.stdout)["modules"]))
        except (ValueError, KeyError):
            cli_dropped = "?"

    failing = [o for o in outcomes if o.case.code]
    controls = [o for o in outcomes if not o.case.code]
    promised = [o for o in failing if o.fix_ok is not None]

    def share(hits: int, of: int) -> str:
        return f"{hits}/{of} = {100 * hits / max(of, 1):.1f} %"

    print(f"corpus: {len(failing)} failing cases, {len(controls)} negative controls (torch {torch.__version__})\n")
    print("| figure | value | goal |")
    print("|---|---|---|")
    print(f"| first finding on the expected line | {share(sum(o.line_ok for o in failing), len(failing))} | ≥ 95 % |")
    print(f"| its kind as expected | {share(sum(o.kind_ok for o in failing), len(failing))} | ≥ 95 % |")
    print(f"| negative controls clean | {share(sum(o.line_ok for o in controls), len(controls))} | all |")
    print(f"| promised preferred fixes that export | {share(sum(bool(o.fix_ok) for o in promised), len(promised))} | all |")
    print(f"| fixes lost to internal errors (`fixes_dropped`: one process, CLI) | {dropped}, {cli_dropped} | 0 |")
    print(f"| texts shown with torch's symbols (messages, fixes, hovers, inlay hints) | {len(torch_words)} | 0 |")
    print(f"| torch.export.export of every module (plain loop, {raised} raised) | {torch_s:.1f} s | |")
    print(f"| exportlens, in one process | {ours_s:.1f} s = {ours_s / torch_s:.1f}× torch.export | |")
    print(f"| `exportlens check` (CLI, workers, no cache; exit {cli.returncode}) | {cli_s:.1f} s = {cli_s / torch_s:.1f}× torch.export | |")
    misses = [o for o in failing if not (o.line_ok and o.kind_ok and o.fix_ok is not False)] + [o for o in controls if not o.line_ok]
    for o in misses:
        got = f"{o.first.path}:{o.first.line} {o.first.code}" if o.first else "no finding"
        print(f"miss: {o.case.path}: expected {o.case.where or o.case.path}:{o.case.line} {o.case.code}, got {got}")
    for line in torch_words:
        print(f"torch's names: {line}")


if __name__ == "__main__":
    main()
