"""The failure corpus (tests/corpus/): modules written as people write them, each failing
the way PyTorch's own export tests, ExportDB and users' reports show, plus negative controls.

Each case says the line that must break and its code (``# expect: EL201``), and whether
its preferred fix must make the module export (``, fix exports``); bench/bench_corpus.py
prints the same figures for the whole corpus, beside plain torch.export. Every case here
is held to all of it: the first finding a user sees is on that line with that code, speaks
in the user's names (no ``s77``, ``u0``), and the promised fix, applied as an editor would,
exports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_cases import Case, cases, check, copy_corpus, judge

from exportlens.exporter.core.report import ModuleReport

pytestmark = pytest.mark.slow  # ~50 modules exported, then each promised fix exported again

CASES = cases()
TORCH_NAMES = re.compile(r"\b[su]\d+\b|\bzuf\d+\b")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleReport]:
    return check(copy_corpus(tmp_path_factory.mktemp("corpus") / "corpus"))


def test_the_corpus_holds_enough_failures_and_controls():
    failing = [c for c in CASES if c.code]
    assert len(failing) >= 40 and len(CASES) - len(failing) >= 5


@pytest.mark.parametrize("case", CASES, ids=[c.path.removesuffix(".py") for c in CASES])
def test_case(case: Case, reports: dict[str, ModuleReport], tmp_path: Path):
    report = reports[case.target]
    outcome = judge(case, report, tmp_path)
    if case.code is None:
        assert outcome.line_ok, f"a negative control must export cleanly: {[str(f) for f in report.findings]}"
        return
    first = outcome.first
    assert first is not None, f"{case.path}: no finding ({report.status.value})"
    assert (first.path, first.line, first.code) == (case.where or case.path, case.line, case.code), str(first)
    assert not TORCH_NAMES.search(first.message), first.message
    if case.fix_exports:
        assert outcome.fix_ok, f"the preferred fix of {first} does not make the module export: {[f.title for f in first.fixes]}"
