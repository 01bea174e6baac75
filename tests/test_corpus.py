"""The failure corpus (tests/corpus/): modules written as people write them, each failing
the way PyTorch's own export tests, ExportDB and users' reports show, plus negative controls.

Each case says the line that must break and its code (``# expect: EL201``), and whether
its preferred fix must make the module export (``, fix exports``); bench/bench_corpus.py
prints the same figures for the whole corpus, beside plain torch.export. Every case here
is held to all of it: the first finding a user sees is on that line with that code, speaks
in the user's names (no ``s77``, ``u0``), and the promised fix, applied as an editor would,
exports. A case whose docstring says ``Known gap:`` is held to the same as a strict xfail;
a case written from a user's report also runs its probe inputs through eager forward."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_cases import CORPUS, Case, cases, check, copy_corpus, judge

from exportlens.exporter.core.report import ModuleReport

pytestmark = pytest.mark.slow  # ~100 modules exported, then each promised fix exported again

CASES = cases()
TORCH_NAMES = re.compile(r"\b[su]\d+\b|\bzuf\d+\b")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleReport]:
    return check(copy_corpus(tmp_path_factory.mktemp("corpus") / "corpus"))


def test_the_corpus_holds_enough_failures_and_controls():
    failing = [c for c in CASES if c.code]
    assert len(failing) >= 40 and len(CASES) - len(failing) >= 5


def test_the_corpus_holds_cases_from_users_reports():
    """Issue 23: at least 25 cases written from users' reports, each saying where the report
    is, the inputs that take every side of its data-dependent branches (built by its
    ``probe_inputs()``), and for a failing case the remedy that keeps the model's meaning."""
    reported = [c for c in CASES if c.reports]
    assert len(reported) >= 25
    for case in reported:
        assert case.probes, f"{case.path}: no `Probes:`"
        assert "def probe_inputs(" in (CORPUS / case.path).read_text(encoding="utf-8"), (
            f"{case.path}: no probe_inputs()"
        )
        assert case.code is None or case.remedy or case.older, f"{case.path}: no `Remedy:`"


@pytest.mark.parametrize("case", [c for c in CASES if c.reports], ids=lambda c: c.path.removesuffix(".py"))
def test_probe_inputs_run_eagerly(case: Case):
    """A probe set is inputs the model takes: every probe runs through eager forward, so a
    program that rejects one rejects an input the user's model accepts."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(f"corpus_{case.path.removesuffix('.py')}", CORPUS / case.path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Case().eval()
    probes = module.Case.probe_inputs()
    assert len(probes) >= 2, "a probe set takes more than one side"
    with torch.no_grad():
        for args in probes:
            model(*args)


def _param(case: Case):
    """A known gap (``Known gap:`` in the case's docstring) is a strict xfail: when exportlens
    gets it right, the test says so and the docstring line is removed."""
    marks = [pytest.mark.xfail(strict=True, reason=case.gap)] if case.gap else []
    return pytest.param(case, id=case.path.removesuffix(".py"), marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
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
        assert outcome.fix_ok, (
            f"the preferred fix of {first} does not make the module export: {[f.title for f in first.fixes]}"
        )
