"""The least narrowing fix first, as data: each fix's ``rank`` (``Narrowing``) is set where it is
made and carried in the JSON; the preferred fix is, of those proven to leave no problem, the
one that narrows least. And a guard that holds at every declared size is never said violated.

The CLI as a user runs it (a real subprocess, real exports and proofs), on one project."""

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
from exportlens.exporter.core.report import (
    SCHEMA,
    Fix,
    Narrowing,
    Report,
    Verified,
    from_dict,
    report_json,
    to_dict,
)
from exportlens.exporter.workers.fix_preference import ranked

REPO = Path(__file__).resolve().parents[1]

NET = """
import torch
from torch import nn
from torch.nn import functional as F


class Sum(nn.Module):
    def forward(self, x):
        return (x * 2).sum(1)


class Halve(nn.Module):
    def __init__(self, factor: int = 2):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        h, w = x.shape[2], x.shape[3]
        return F.interpolate(x, size=(int(h / self.factor), int(w / self.factor)), mode="nearest")


class Floor(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        pad = torch.zeros(max(16, n), 4)
        return pad[:n] + x
"""

PYPROJECT = """
[tool.exportlens.modules."net.py:Sum"]
inputs = { x = "f32[batch, 8]" }
dims = { batch = { min = 1, max = 64, example = 1 } }

[tool.exportlens.modules."net.py:Halve"]
inputs = { x = "f32[1, 3, h, w]" }
dims = { h = { min = 8, max = 64, example = 32 }, w = { min = 8, max = 64, example = 32 } }

[tool.exportlens.modules."net.py:Floor"]
inputs = { x = "f32[n, 4]" }
dims = { n = { min = 2, max = 64 } }
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("narrowing")
    (root / "net.py").write_text(textwrap.dedent(NET).lstrip(), encoding="utf-8")
    (root / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT).lstrip(), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", ".", "--format", "json", "--no-cache"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, encoding="utf-8", timeout=300)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def _module(report: dict, name: str) -> dict:
    (module,) = [m for m in report["modules"] if m["target"] == f"net.py:{name}"]
    return module


def _fixes(finding: dict) -> list[tuple[bool, str, str, str]]:
    return [(f["preferred"], f["rank"], f["verified"], f["title"]) for f in finding["fixes"]]


@pytest.mark.slow
def test_an_example_of_one_is_changed_rather_than_the_dim_made_static(checked: dict):
    """``batch`` declared [1, 64] and traced at 1: torch fixes it to 1, and the fix that keeps
    the whole range is another example size, not "Make `batch` static: size 1"."""
    (finding,) = _module(checked, "Sum")["findings"]
    assert (finding["code"], finding["line"]) == ("EL204", 3)
    assert _fixes(finding) == [
        (
            True,
            "example",
            "serves",
            "Trace with `batch` = 2: an example of 1 makes torch fix `batch` to it"
            " (module then exports and serves its ranges)",
        ),
        (False, "static", "unverified", "Make `batch` static: size 1"),
    ]
    assert checked["schema"] == SCHEMA == "2.5"


@pytest.mark.slow
def test_int_of_a_division_is_written_as_floor_division_before_any_static_size(checked: dict):
    """``int(h / self.factor)`` pins ``h`` and ``w`` near the example's sizes: writing ``//``
    keeps both dynamic, and is preferred on each finding over making them static."""
    findings = _module(checked, "Halve")["findings"]
    assert [(f["code"], f["line"]) for f in findings] == [("EL201", 18), ("EL201", 18), ("EL204", 18), ("EL204", 18)]
    rewrite = (
        True,
        "rewrite",
        "serves",
        "Write `h // self.factor`, `w // self.factor` for `int(h / self.factor)`, `int(w / self.factor)`:"
        " the same sizes in integer arithmetic, kept symbolic (module then exports and serves its ranges)",
    )
    for finding in findings:
        preferred = [f for f in _fixes(finding) if f[0]]
        assert preferred == [rewrite], finding["message"]
        assert all(rank == "static" for _, rank, _, _ in _fixes(finding)[1:]), _fixes(finding)


@pytest.mark.slow
def test_a_guard_that_holds_at_every_declared_size_is_not_said_violated(checked: dict):
    """torch refuses ``n`` over ``n <= max(16, n)``, which every size satisfies: the message
    says so plainly, with no requirement and no "i.e." restating the declared range; the fix
    is the range where ``max(16, n)`` takes one side, which torch proves (issue 36)."""
    (finding,) = _module(checked, "Floor")["findings"]
    assert (finding["code"], finding["line"]) == ("EL201", 25)
    assert _fixes(finding) == [
        (True, "range", "serves", "Set `n` to Dim('n', max=16) (module then exports and serves its ranges)")
    ]
    assert finding["message"] == (
        "`n` is declared as [2, 64]; this line's guard `n <= max(16, n)` holds at every size in it,"
        " but torch.export cannot prove that and refuses the range (torch's limit)"
    )


def _fix(action: str, rank: Narrowing, verified: Verified, preferred: bool = False, remaining: int = 0) -> Fix:
    return Fix(action, (), preferred=preferred, verified=verified, remaining=remaining, rank=rank)


def test_a_fix_that_leaves_a_problem_is_never_preferred_over_one_that_leaves_none():
    """The worker preferred a rewrite whose proof left a problem ("(1 more problem remains)");
    a static size proven to leave none is preferred instead, since it is what exports."""
    partial = _fix("Write `x.shape[0]`", Narrowing.REWRITE, Verified.PARTIAL, preferred=True, remaining=1)
    static = _fix("Make `n` static: size 4", Narrowing.STATIC, Verified.SERVES)
    finding = codes.finding(codes.RANGE_VIOLATION, "`n` is declared as [2, 64], but …", "m.py", 5)
    after = ranked(replace(finding, fixes=(partial, static)))
    assert [(f.action, f.preferred) for f in after.fixes] == [("Write `x.shape[0]`", False), (static.action, True)]


def test_of_fixes_that_leave_no_problem_the_least_narrowing_is_preferred():
    """A range, a relation and a static size all proven: the relation keeps most (issue 36's
    order: example, relation, range, assumption, static), whatever order they were offered in."""
    fixes = (
        _fix("Make `n` static: size 4", Narrowing.STATIC, Verified.SERVES, preferred=True),
        _fix("Set `n` to Dim('n', max=16)", Narrowing.RANGE, Verified.SERVES),
        _fix("Declare `m = n + 1`", Narrowing.RELATION, Verified.SERVES),
        _fix("Trace with `n` = 2", Narrowing.EXAMPLE, Verified.UNVERIFIED),  # not proven: never preferred
    )
    finding = codes.finding(codes.RANGE_VIOLATION, "`n` is declared as [2, 64], but …", "m.py", 5)
    after = ranked(replace(finding, fixes=fixes))
    assert [f.preferred for f in after.fixes] == [False, False, True, False]
    assert [n.value for n in sorted(Narrowing, key=lambda n: n.order)] == [
        "rewrite",
        "branch-free",
        "example",
        "relation",
        "range",
        "assumption",
        "static",
    ]


def test_a_fix_rank_is_in_the_json_and_read_back():
    """``rank`` is a field of the documented JSON (schema 2.1); a 2.0 report without it reads."""
    fix = _fix("Make `n` static: size 4", Narrowing.STATIC, Verified.SERVES)
    assert report_json(Report())["schema"] == "2.5"  # (2.5 made equalities records)
    data = to_dict(fix)
    assert data["rank"] == "static"
    assert from_dict(Fix, data) == fix
    assert from_dict(Fix, {k: v for k, v in data.items() if k != "rank"}).rank is Narrowing.REWRITE
