"""A fix search never loses a finding: any failure while building or proving a fix drops
that fix (logged on ``exportlens.fixes``, counted in ``ModuleReport.fixes_dropped``), and the
finding stays on its line. A guard that holds with a period is offered as a multiple."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest
from corpus_cases import check, copy_corpus

from exportlens.exporter.core.report import to_dict

pytestmark = pytest.mark.slow


def test_a_halved_and_doubled_size_is_declared_a_multiple_of_two(tmp_path: Path):
    """``2*trunc(0.5*side) == side``, which sympy does not solve: a scan once found only the
    size 32, torch refused ``Dim(min=32, max=32)`` and the module became EL901 on its class."""
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="range_interpolate_round_trip.py:Case")["range_interpolate_round_trip.py:Case"]
    (finding,) = report.findings
    assert (finding.code, finding.line) == ("EL201", 16)
    assert finding.message.endswith("i.e. `side % 2 == 0`"), finding.message
    assert [f.title for f in finding.fixes if f.preferred] == ["Declare `side = 2*_side`"]
    assert report.fixes_dropped == 0 and to_dict(report)["fixes_dropped"] == 0


def test_a_fix_torch_refuses_to_build_is_dropped_and_counted(project, caplog: pytest.LogCaptureFixture):
    from test_user_names import _exported
    from torch.export import Dim

    project.write("pyproject.toml", '[tool.exportlens.modules."top.py:Top"]\ninputs = { x = "f32[n, 4]", k = 3 }\n')
    project.write(
        "top.py", "from torch import nn\n\nclass Top(nn.Module):\n    def forward(self, x, k):\n        return x * k\n"
    )
    _, ctx = _exported(project, "Top")
    with caplog.at_level(logging.INFO, logger="exportlens.fixes"):
        built = ctx.fix_or("bounds of side", lambda: Dim("side", min=32, max=32), None)
    assert built is None
    assert len(ctx.dropped) == 1 and ctx.dropped[0].startswith("bounds of side: AssertionError: Cannot create Dim")
    assert any("dropped a fix for Top" in r.getMessage() and r.exc_info for r in caplog.records)


def test_a_proof_that_fails_inside_exportlens_drops_its_fix_and_counts_it():
    """The proof's export (workers/proofs.py) ends in EL901, exportlens's own failure: the fix
    says nothing about the user's module, so it is not offered as partial; it is dropped and
    counted, and the finding stays with its other fixes."""
    from exportlens.exporter.core import codes
    from exportlens.exporter.core.report import Edit, Fix, ModuleReport, Status
    from exportlens.exporter.core.sources import Sources
    from exportlens.exporter.workers.converge import Converging
    from exportlens.exporter.workers.proofs import Proof, proven
    from exportlens.exporter.workers.protocol import Job

    edit = Edit("pyproject.toml", 3, 1, 3, 5, "seq = { max = 8 }")
    preferred, other = (
        Fix("Set `seq` to Dim('seq', max=8)", (edit,), preferred=True),
        Fix("Make `seq` static: size 4", (edit,)),
    )
    finding = codes.finding(
        codes.RANGE_VIOLATION, "`seq` is declared as [2, 64], but this line requires `seq <= 8`", "m.py", 5
    )
    report = ModuleReport("m.py:M", Status.FAILED, (replace(finding, fixes=(preferred, other)),))
    crashed = ModuleReport(
        "m.py:M", Status.FAILED, (codes.finding(codes.INTERNAL, "exportlens failed: AssertionError", "m.py", 3),)
    )
    rounds = Converging(Job("/nowhere", "m.py:M", 1), Sources.of(Path("/nowhere")))
    rounds.step(crashed)  # the proof's first (and only) export
    after = proven(report, [(Proof(0, 0, None), rounds)])
    assert [f.title for f in after.findings[0].fixes] == ["Make `seq` static: size 4"]
    assert after.fixes_dropped == 1
