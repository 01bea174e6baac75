"""A fix proven for the spec's deployment targets too (issue 36): where ``targets`` are declared,
the proof of a fix lowers the fixed module for each, and the fix says what that gave; a fix
that exports but does not lower is not preferred over one that lowers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from exportlens.exporter.core import codes
from exportlens.exporter.core.lowering import COMPILED, FAILED, Lowering
from exportlens.exporter.core.report import Fix, Narrowing, Verified
from exportlens.exporter.workers.fix_preference import ranked

REPO = Path(__file__).resolve().parents[1]

# the image tokens must match the features: a value check whose only fix is a ``torch._check``,
# which the exported program keeps as an assertion op (``_assert_scalar``) for the target to take
TOKENS = """
import torch
from torch import nn


class Tokens(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.tensor([[5, 5, 1, 2]]), torch.randn(2, 4))

    def forward(self, ids, feats):
        n = (ids == 5).sum().item()
        if n != feats.shape[0]:
            raise ValueError("the features and the image tokens do not match")
        return feats * 2 + n
"""


@pytest.mark.slow
def test_a_check_fix_says_whether_the_fixed_module_lowers_for_executorch(tmp_path: Path):
    pytest.importorskip("executorch")
    (tmp_path / "net.py").write_text(textwrap.dedent(TOKENS).lstrip(), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.exportlens]\ntargets = ["executorch"]\n', encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", ".", "--format", "json", "--no-cache"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, encoding="utf-8", timeout=400)
    assert done.returncode == 1, done.stderr
    (module,) = json.loads(done.stdout)["modules"]
    (finding,) = module["findings"]
    (preferred,) = [f for f in finding["fixes"] if f["preferred"]]
    assert preferred["title"] == (
        "Assume `n == feats.shape[0]` here: insert torch._check(n == feats.shape[0])"
        " (module then exports and serves its ranges; lowers for executorch)"
    )
    assert [(x["target"], x["status"]) for x in preferred["lowerings"]] == [("executorch", COMPILED)]


def _fix(action: str, rank: Narrowing, *lowerings: Lowering) -> Fix:
    return Fix(action, (), verified=Verified.SERVES, rank=rank, lowerings=lowerings)


def test_a_fix_that_does_not_lower_is_not_preferred_over_one_that_does():
    """An assumption whose program lowers is preferred over a rewrite whose program ExecuTorch
    refuses: the deployment is what the user asked to keep."""
    refused = _fix("Write `x.new_zeros(n)`", Narrowing.REWRITE, Lowering("executorch", FAILED))
    check = _fix("Assume `n > 0` here", Narrowing.ASSUMPTION, Lowering("executorch", COMPILED))
    finding = codes.finding(codes.DATA_DEPENDENT, "`n > 0` depends on …", "m.py", 5)
    after = ranked(replace(finding, fixes=(refused, check)))
    assert [(f.action, f.preferred) for f in after.fixes] == [(refused.action, False), (check.action, True)]
    assert after.fixes[0].title == (
        "Write `x.new_zeros(n)` (module then exports and serves its ranges; does not lower for executorch)"
    )
